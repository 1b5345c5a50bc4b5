// Lists in Kubernetes' protobuf against envtest, which encodes as kube-apiserver does (ADR 23):
// the same Secrets and the same errors as the JSON the mirror asked for before.

import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SecretObject, WatchItem } from "../../src/kube/cache/list-watch.ts";
import { createListWatch } from "../../src/kube/rest/client.ts";
import { readList } from "../../src/kube/rest/list-stream.ts";
import type { Accept, KubeTransport } from "../../src/kube/rest/transport.ts";
import { createWatchStream } from "../../src/kube/rest/watch-stream.ts";
import { connect, drain, openWatch } from "../support/list-watch-harness.ts";
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

describe("watches in protobuf (ADR 65)", () => {
  /** Opens a streaming list of every Secret with the given Accept; `take(n)` reads n items. */
  async function streamingList(accept: Accept) {
    const stop = new AbortController();
    const query = new URLSearchParams({
      watch: "1",
      sendInitialEvents: "true",
      resourceVersionMatch: "NotOlderThan",
      allowWatchBookmarks: "true",
    });
    const opened = await transport.openStream("/api/v1/secrets", query, stop.signal, { accept });
    if (!opened.ok) throw new Error(opened.error.kind);
    const { contentType } = opened.value;
    const iterator = createWatchStream(opened.value, stop.signal)[Symbol.asyncIterator]();
    const take = async (n: number) => {
      const items: WatchItem[] = [];
      while (items.length < n) items.push((await iterator.next()).value as WatchItem);
      return items;
    };
    return { contentType, take, close: () => stop.abort() };
  }

  it("yields the events JSON gives, from frames split anywhere", async () => {
    envtest.faults.chunking({ mode: "split", seed: 7 });
    const protobuf = await streamingList("protobuf-or-json");
    const json = await streamingList("json");
    envtest.apply({ namespace: "tenant-b", name: "blog-credentials", data: { token: "b2" } });
    envtest.delete("tenant-b", "empty");
    const [fromProtobuf, fromJson] = [await protobuf.take(6), await json.take(6)];
    protobuf.close();
    json.close();
    expect({ contentType: protobuf.contentType, events: fromProtobuf }).toEqual({
      contentType: "application/vnd.kubernetes.protobuf;stream=watch",
      events: fromJson,
    });
    expect(fromJson.map((e) => e.ok && e.value.type)).toEqual([
      "ADDED",
      "ADDED",
      "ADDED",
      "BOOKMARK",
      "MODIFIED",
      "DELETED",
    ]);
    expect(fromJson[3]).toMatchObject({ ok: true, value: { initialEventsEnd: true } });
  });

  it("is what the ListWatch asks for", async () => {
    const lw = createListWatch(transport, {});
    const stop = new AbortController();
    const opened = await lw.watch({
      resourceVersion: "",
      sendInitialEvents: true,
      timeoutSeconds: 30,
      signal: stop.signal,
    });
    if (!opened.ok) throw new Error(opened.error.kind);
    const iterator = opened.value[Symbol.asyncIterator]();
    const mine: WatchItem[] = [];
    while (mine.length < 4) mine.push((await iterator.next()).value as WatchItem);
    stop.abort();
    const json = await streamingList("json");
    const fromJson = await json.take(4);
    json.close();
    expect(mine).toEqual(fromJson);
    // The ListWatch's stream was the protobuf one: fewer bytes for the same events.
    const [protobufBytes, jsonBytes] = envtest.requests
      .entries()
      .slice(-2)
      .map((e) => e.bytes);
    expect(protobufBytes).toBeLessThan(jsonBytes ?? 0);
  });

  it("ends with a decode item, holding no Secret data, on a frame cut short or too long", async () => {
    const watch = await streamingList("protobuf-or-json");
    await watch.take(4);
    envtest.faults.injectGarbage("bytes");
    const [item] = await watch.take(1);
    watch.close();
    expect(item).toMatchObject({ ok: false, error: { kind: "decode" } });
    expect(JSON.stringify(item)).not.toContain("s3cr3t");
  });

  /** Envtest's frames of the streaming list above (3 Secrets and the end bookmark), as bytes. */
  async function framesOfEnvtest(): Promise<{ body: Buffer; items: WatchItem[] }> {
    const stop = new AbortController();
    const query = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
    const res = await fetch(`${envtest.url}/api/v1/secrets?${query}&allowWatchBookmarks=true`, {
      headers: { accept: "application/vnd.kubernetes.protobuf" },
      signal: stop.signal,
    });
    let body = Buffer.alloc(0);
    for await (const chunk of res.body ?? []) {
      body = Buffer.concat([body, chunk]);
      if (body.includes("k8s.io/initial-events-end")) break;
    }
    stop.abort();
    const json = await streamingList("json");
    const items = await json.take(4);
    json.close();
    return { body, items };
  }

  /** A stub answering `chunks` as a protobuf watch body, a pause between writes. */
  async function replay(chunks: readonly Buffer[]) {
    const { lw } = await connect(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/vnd.kubernetes.protobuf;stream=watch" });
      for (const c of chunks) {
        res.write(c);
        await new Promise((r) => setTimeout(r, 1));
      }
      res.end();
    });
    return drain(await openWatch(lw));
  }

  it("reads frames cut into pieces of a few bytes, and a frame cut short at the end", async () => {
    const { body, items } = await framesOfEnvtest();
    const pieces: Buffer[] = [];
    for (let at = 0, n = 1; at < body.length; at += n, n = (n % 7) + 1)
      pieces.push(body.subarray(at, at + n));
    expect(await replay(pieces)).toEqual(items);
    const cut = body.length - 3;
    expect(await replay([body.subarray(0, cut)])).toEqual([
      ...items.slice(0, 3),
      {
        ok: false,
        error: expect.objectContaining({
          kind: "decode",
          message: expect.stringMatching(/^watch frame truncated after \d+ bytes$/),
        }),
      },
    ]);
  });

  it("refuses a frame announced longer than 16 MiB without buffering it", async () => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(16 * 1024 * 1024 + 1);
    expect(await replay([head, Buffer.alloc(1024)])).toEqual([
      {
        ok: false,
        error: {
          kind: "decode",
          message: "watch frame of 16777217 bytes exceeds the frame limit",
          bytes: 16777217,
        },
      },
    ]);
  });
});
