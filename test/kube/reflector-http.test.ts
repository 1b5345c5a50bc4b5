// The reflector over the real HTTP ListWatch, real time and sockets: what the fake cannot show.

import type http from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Reflector } from "../../src/kube/cache/reflector.ts";
import type { ReflectorStatus } from "../../src/kube/cache/reflector-status.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { sendJson } from "../support/api-server-stub.ts";
import { connect, line } from "../support/list-watch-harness.ts";
import { waitUntil } from "../support/wait.ts";

const reflectors: Reflector[] = [];

// Stopped before the harness closes the transport and the stub.
afterEach(async () => {
  for (const r of reflectors.splice(0)) await r.stop();
});

const wireSecret = (name: string, rv: string) => ({
  metadata: { namespace: "ns1", name, resourceVersion: rv },
  data: { k: "dg==" },
});

/** Socket and timer handles, to compare before and after. */
function handles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) {
    if (name === "Timeout" || name.startsWith("TCP")) counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

// Assertions on what happens over real sockets are retried every 10 ms for up to 3 s.
const POLL = { timeout: 3_000, interval: 10 };

/** A server that lists a@1 at RV 10 and answers each watch with onWatch; no streaming lists. */
async function mirror(
  onWatch: (n: number, res: http.ServerResponse, query: URLSearchParams) => void,
) {
  let watches = 0;
  const { stub, lw, transport } = await connect((_req, res, url) => {
    if (url.searchParams.get("watch") !== "1") {
      sendJson(res, 200, { metadata: { resourceVersion: "10" }, items: [wireSecret("a", "1")] });
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    onWatch(watches++, res, url.searchParams);
  });
  const log: string[] = [];
  const statuses: ReflectorStatus[] = [];
  const reflector = new Reflector({
    name: "http",
    listWatch: lw,
    watchTimeoutSeconds: 1,
    inactivityGraceMs: 200,
    handler: {
      onEvent: ({ type, object: { metadata: m } }) =>
        log.push(`${type} ${m.name}@${m.resourceVersion}`),
      onSynced: () => log.push("SYNCED"),
    },
    onStatus: (s) => statuses.push(s),
    streamingLists: new StreamingLists(false),
  });
  reflectors.push(reflector);
  return { stub, transport, reflector, log, statuses };
}

describe("Reflector over HTTP", () => {
  it("lists, watches, and on stop closes the watch connection and leaves no socket or timer", async () => {
    // Vitest reports the test's start behind a 100 ms throttle timer; once it fired, `before`
    // holds only what the process had before the reflector.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const before = handles();

    const m = await mirror((_n, res) =>
      res.write(line({ type: "ADDED", object: wireSecret("b", "11") })),
    );
    m.reflector.start();
    await vi.waitFor(() => expect(m.log).toEqual(["ADDED a@1", "SYNCED", "ADDED b@11"]), POLL);

    await m.reflector.stop();
    await m.stub.clientClosed(1);
    m.transport.close();
    await m.stub.close();
    // vi.waitFor keeps a timer of its own while it checks; waitUntil holds none during a check.
    await waitUntil(
      () => {
        expect(handles()).toEqual(before);
        return true;
      },
      { timeoutMs: 3_000, intervalMs: 10, what: "no socket or timer left" },
    );
  });

  it("resumes from the last bookmark when the server ends the watch at its timeout", async () => {
    const m = await mirror((n, res, query) => {
      if (n > 0) return;
      res.write(line({ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }));
      setTimeout(() => res.end(), Number(query.get("timeoutSeconds")) * 1000);
    });
    m.reflector.start();
    await vi.waitFor(() => expect(m.stub.requests).toHaveLength(3), POLL);
    expect(m.stub.requests.map((r) => r.query.resourceVersion)).toEqual(["0", "10", "15"]);
    expect(m.statuses.filter((s) => s.kind === "watch-restart")).toEqual([
      { kind: "watch-restart", reason: "timeout", resourceVersion: "15", events: 1 },
    ]);
  });

  it("tears down a watch that goes silent, and resumes it without relisting", async () => {
    const m = await mirror(() => {}); // headers, then nothing: a half-open connection
    m.reflector.start();
    await vi.waitFor(() => expect(m.stub.requests).toHaveLength(3), { ...POLL, timeout: 5_000 });
    await m.stub.clientClosed(1);
    expect(m.stub.requests.map((r) => r.query.resourceVersion)).toEqual(["0", "10", "10"]);
    expect(m.statuses.filter((s) => s.kind === "watch-restart")).toEqual([
      { kind: "watch-restart", reason: "inactive", resourceVersion: "10", events: 0 },
    ]);
  });

  it("lets a list that keeps arriving take longer than the request timeout", async () => {
    const items = Array.from({ length: 6 }, (_, i) => JSON.stringify(wireSecret(`s${i}`, "1")));
    const { lw } = await connect((_req, res, url) => {
      if (url.searchParams.get("watch") === "1") {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        return;
      }
      // Six items 100 ms apart: 600 ms in all, against a 250 ms request timeout.
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"kind":"SecretList","items":[');
      let sent = 0;
      const next = setInterval(() => {
        res.write(`${sent === 0 ? "" : ","}${items[sent]}`);
        if (++sent === items.length) {
          clearInterval(next);
          res.end('],"metadata":{"resourceVersion":"10"}}');
        }
      }, 100);
    });
    const log: string[] = [];
    const errors: ReflectorStatus[] = [];
    const reflector = new Reflector({
      name: "slow-list",
      listWatch: lw,
      watchTimeoutSeconds: 5,
      requestTimeoutMs: 250,
      handler: { onEvent: ({ object }) => log.push(object.metadata.name), onSynced: () => {} },
      onStatus: (s) => {
        if (s.kind === "error") errors.push(s);
      },
      streamingLists: new StreamingLists(false),
    });
    reflectors.push(reflector);
    reflector.start();
    await vi.waitFor(() => expect(reflector.hasSynced()).toBe(true), POLL);
    expect({ log, errors }).toEqual({ log: ["s0", "s1", "s2", "s3", "s4", "s5"], errors: [] });
  });
});
