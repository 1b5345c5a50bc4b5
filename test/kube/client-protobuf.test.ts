// Lists in Kubernetes' protobuf against envtest, which encodes as kube-apiserver does (ADR 23):
// the same Secrets and the same errors as the JSON the mirror asked for before.

import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { createListWatch } from "../../src/kube/rest/client.ts";
import { readList } from "../../src/kube/rest/list-stream.ts";
import type { Accept, KubeTransport } from "../../src/kube/rest/transport.ts";
import { envtestFor, transportFor } from "../support/world.ts";

let envtest: Envtest;
let transport: KubeTransport;
let closeTransport: () => Promise<void>;

beforeEach(async () => {
  envtest = await envtestFor();
  ({ transport, close: closeTransport } = await transportFor(envtest));
  envtest.apply({
    namespace: "tenant-a",
    name: "shop-credentials",
    data: { token: "s3cr3t", blob: Uint8Array.from([0, 1, 0xfe, 0xff]) },
    labels: { mirror: "yes", team: "payments" },
    annotations: { note: "kept by the server, dropped by the mirror" },
  });
  envtest.apply({ namespace: "tenant-b", name: "empty", type: "example.com/custom" });
  envtest.apply({ namespace: "tenant-b", name: "blog-credentials", data: { token: "b" } });
});
afterEach(async () => {
  await closeTransport();
  await envtest.close();
});

/** One list request with the given Accept: its Content-Type, items and page, or its error. */
async function list(accept: Accept, query: Record<string, string> = {}) {
  const signal = new AbortController().signal;
  const params = new URLSearchParams(query);
  const opened = await transport.openStream("/api/v1/secrets", params, signal, {
    pooled: true,
    accept,
  });
  if (!opened.ok) return opened;
  const items: SecretObject[] = [];
  const page = await readList(opened.value, signal, (item) => void items.push(item));
  return { contentType: opened.value.contentType, items, page };
}

describe("lists in protobuf", () => {
  it("hands on the Secrets JSON gives, in the same order, with the same page", async () => {
    const protobuf = await list("protobuf-or-json");
    const json = await list("json");
    expect(protobuf).toEqual({ ...json, contentType: "application/vnd.kubernetes.protobuf" });
    expect(json).toMatchObject({ contentType: "application/json" });
    expect(json).toMatchObject({ items: { length: 3 }, page: { ok: true } });
  });

  it("pages with limit and continue as JSON does", async () => {
    const pages = async (accept: Accept) => {
      const first = await list(accept, { limit: "2" });
      const token = "page" in first && first.page.ok ? first.page.value.continue : undefined;
      const second = await list(accept, { limit: "2", continue: token ?? "" });
      return [first, second].map((p) => ("items" in p ? { items: p.items, page: p.page } : p));
    };
    const json = await pages("json");
    expect(await pages("protobuf-or-json")).toEqual(json);
    expect(json.map((p) => ("items" in p ? p.items.map((s) => s.metadata.name) : p))).toEqual([
      ["shop-credentials", "blog-credentials"],
      ["empty"],
    ]);
  });

  it("is what the ListWatch asks for", async () => {
    const lw = createListWatch(transport, {});
    const items: SecretObject[] = [];
    const page = await lw.list({ signal: new AbortController().signal }, (i) => void items.push(i));
    const json = await list("json");
    const protobuf = await list("protobuf-or-json");
    expect({ page, items }).toEqual(
      "items" in json ? { page: json.page, items: json.items } : json,
    );
    // The ListWatch's response was the protobuf one, byte for byte in size, not the JSON one.
    const [mine, asJson, asProtobuf] = envtest.requests
      .entries()
      .slice(-3)
      .map((e) => e.bytes);
    expect({ mine, asJson }).toEqual({ mine: asProtobuf, asJson: expect.any(Number) });
    expect(asJson).toBeGreaterThan(mine ?? Infinity);
    expect(protobuf).toMatchObject({ contentType: "application/vnd.kubernetes.protobuf" });
  });

  it("reads the error Status from a protobuf body as from a JSON one", async () => {
    const errorFor = async (accept: Accept, query: Record<string, string>) => {
      envtest.faults.failNext({ verb: "list", count: 1, status: 429, retryAfterSeconds: 3 });
      const throttled = await list(accept, query);
      const expired = await list(accept, { resourceVersion: "1", resourceVersionMatch: "Exact" });
      return { throttled, expired };
    };
    envtest.faults.compact();
    const json = await errorFor("json", {});
    expect(await errorFor("protobuf-or-json", {})).toEqual(json);
    expect(json).toEqual({
      throttled: {
        ok: false,
        error: expect.objectContaining({ kind: "http", status: 429, retryAfterSeconds: 3 }),
      },
      expired: {
        ok: false,
        error: expect.objectContaining({ kind: "http", status: 410, reason: "Expired" }),
      },
    });
  });
});
