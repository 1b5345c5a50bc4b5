import { describe, expect, it } from "vitest";
import { decodeListMetadata, decodeWatchLine } from "../../src/kube/codec/wire.ts";
import { err, ok } from "../../src/result.ts";

const SECRET_VALUE = "c3VwZXItc2VjcmV0LXRva2Vu";

/** One watch event as the API server writes it on a line. */
const eventLine = (type: string, object: unknown): string => JSON.stringify({ type, object });

describe("decodeWatchLine", () => {
  it("keeps what the mirror needs of a Secret and drops the rest", () => {
    const kept = {
      namespace: "tenant-a",
      name: "shop",
      resourceVersion: "42",
      uid: "u-1",
      labels: { app: "shop" },
    };
    const line = eventLine("MODIFIED", {
      kind: "Secret",
      apiVersion: "v1",
      metadata: {
        ...kept,
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": `{"data":"${SECRET_VALUE}"}`,
        },
        managedFields: [{ manager: "kubectl" }],
      },
      type: "Opaque",
      data: { token: SECRET_VALUE },
    });
    expect(decodeWatchLine(line)).toEqual(
      ok({
        type: "MODIFIED",
        object: { metadata: kept, type: "Opaque", data: { token: "super-secret-token" } },
      }),
    );
  });

  it("drops a null data or labels, as if absent", () => {
    const metadata = { namespace: "tenant-a", name: "shop", resourceVersion: "7" };
    expect(
      decodeWatchLine(eventLine("ADDED", { metadata: { ...metadata, labels: null }, data: null })),
    ).toStrictEqual(ok({ type: "ADDED", object: { metadata } }));
    expect(
      decodeWatchLine(
        eventLine("ADDED", { metadata: { ...metadata, labels: null }, data: { k: "dg==" } }),
      ),
    ).toStrictEqual(
      ok({
        type: "ADDED",
        object: { metadata, data: Object.assign(Object.create(null), { k: "v" }) },
      }),
    );
    expect(
      decodeWatchLine(
        eventLine("ADDED", { metadata: { ...metadata, labels: { a: "b" } }, data: null }),
      ),
    ).toStrictEqual(
      ok({ type: "ADDED", object: { metadata: { ...metadata, labels: { a: "b" } } } }),
    );
  });

  it("decodes every byte value one character per byte, and a value with bad padding leniently", () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const metadata = { namespace: "tenant-a", name: "shop", resourceVersion: "8" };
    const line = eventLine("ADDED", {
      metadata,
      data: { every: every.toString("base64"), unpadded: "YQ", badPadding: "YQ=" },
    });
    const decoded = decodeWatchLine(line);
    expect(
      decoded.ok && decoded.value.type === "ADDED" && { ...decoded.value.object.data },
    ).toEqual({ every: every.toString("latin1"), unpadded: "a", badPadding: "a" });
  });

  it("reads a bookmark's resourceVersion", () => {
    const line =
      '{"type":"BOOKMARK","object":{"kind":"Secret","metadata":{"resourceVersion":"77","annotations":{}}}}';
    expect(decodeWatchLine(line)).toEqual(ok({ type: "BOOKMARK", resourceVersion: "77" }));
  });

  it("reads the bookmark that ends a streaming list's initial events, and only a true one", () => {
    const bookmark = (value: string) =>
      eventLine("BOOKMARK", {
        metadata: { resourceVersion: "78", annotations: { "k8s.io/initial-events-end": value } },
      });
    expect([decodeWatchLine(bookmark("true")), decodeWatchLine(bookmark("false"))]).toEqual([
      ok({ type: "BOOKMARK", resourceVersion: "78", initialEventsEnd: true }),
      ok({ type: "BOOKMARK", resourceVersion: "78" }),
    ]);
  });

  it("reads an ERROR event's Status", () => {
    const line = eventLine("ERROR", {
      kind: "Status",
      status: "Failure",
      message: "too old resource version: 1 (5)",
      reason: "Expired",
      code: 410,
    });
    expect(decodeWatchLine(line)).toEqual(
      ok({
        type: "ERROR",
        status: { code: 410, reason: "Expired", message: "too old resource version: 1 (5)" },
      }),
    );
  });

  it("reports invalid JSON by size and position, never quoting the line", () => {
    const line = `{"type":"ADDED","object":{"data":{"token":"${SECRET_VALUE}" oops}}}`;
    const decoded = decodeWatchLine(line);
    expect(decoded).toEqual(
      err({ message: `watch event of ${line.length} bytes is not valid JSON at position 69` }),
    );
  });

  it("reports a wrong type by path, never the value", () => {
    const line = eventLine("ADDED", {
      metadata: { namespace: "n", name: "s", resourceVersion: "1" },
      data: { token: 12345 },
    });
    expect(decodeWatchLine(line)).toEqual(
      err({ message: "ADDED object: invalid_type at data.token (expected string)" }),
    );
  });

  it("rejects an unknown event type", () => {
    expect(decodeWatchLine('{"type":"RENAMED","object":{}}')).toEqual(
      err({ message: "watch event: invalid_value at type" }),
    );
  });
});

describe("decodeListMetadata", () => {
  it("treats an empty continue token as the last page", () => {
    expect(decodeListMetadata({ resourceVersion: "9", continue: "" })).toEqual(
      ok({ resourceVersion: "9" }),
    );
  });
});
