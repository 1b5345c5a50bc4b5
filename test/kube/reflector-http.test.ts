// The reflector over the real HTTP ListWatch, real time and sockets: what the fake cannot show.

import type http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createListWatch } from "../../src/kube/client.ts";
import { createKubeTransport, type KubeTransport } from "../../src/kube/http-transport.ts";
import { loadKubeConfig } from "../../src/kube/kubeconfig.ts";
import { Reflector } from "../../src/kube/reflector.ts";
import type { ReflectorStatus } from "../../src/kube/reflector-status.ts";
import { type ApiStub, sendJson, startApiStub } from "./api-stub.ts";

const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const wireSecret = (name: string, rv: string) => ({
  metadata: { namespace: "ns1", name, resourceVersion: rv },
  data: { k: "dg==" },
});
const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** Socket and timer handles, to compare before and after. */
function handles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) {
    if (name === "Timeout" || name.startsWith("TCP")) counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

async function eventually(check: () => void, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** A server that lists a@1 at RV 10 and answers each watch with onWatch. */
async function mirror(
  onWatch: (n: number, res: http.ServerResponse, query: URLSearchParams) => void,
) {
  let watches = 0;
  const stub: ApiStub = await startApiStub((_req, res, url) => {
    if (url.searchParams.get("watch") !== "1") {
      sendJson(res, 200, { metadata: { resourceVersion: "10" }, items: [wireSecret("a", "1")] });
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    onWatch(watches++, res, url.searchParams);
  });
  const loaded = loadKubeConfig(stub.kubeconfigPath);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const transport = createKubeTransport(loaded.value.kubeConfig);
  if (!transport.ok) throw new Error(transport.error.message);
  const t: KubeTransport = transport.value;
  const log: string[] = [];
  const statuses: ReflectorStatus[] = [];
  const reflector = new Reflector({
    name: "http",
    listWatch: createListWatch(t, { namespace: "ns1" }),
    watchTimeoutSeconds: 1,
    inactivityGraceMs: 200,
    handler: {
      onEvent: ({ type, object: { metadata: m } }) =>
        log.push(`${type} ${m.name}@${m.resourceVersion}`),
      onSynced: () => log.push("SYNCED"),
    },
    onStatus: (s) => statuses.push(s),
  });
  cleanup.push(() => stub.close());
  cleanup.push(() => t.close());
  cleanup.push(() => reflector.stop());
  return { stub, transport: t, reflector, log, statuses };
}

describe("Reflector over HTTP", () => {
  it("lists, watches, and on stop closes the watch connection and leaves no socket or timer", async () => {
    const before = handles();
    const m = await mirror((_n, res) =>
      res.write(line({ type: "ADDED", object: wireSecret("b", "11") })),
    );
    m.reflector.start();
    await eventually(() => expect(m.log).toEqual(["ADDED a@1", "SYNCED", "ADDED b@11"]));

    await m.reflector.stop();
    await m.stub.clientClosed(1);
    m.transport.close();
    await m.stub.close();
    await eventually(() => expect(handles()).toEqual(before));
  });

  it("resumes from the last bookmark when the server ends the watch at its timeout", async () => {
    const m = await mirror((n, res, query) => {
      if (n > 0) return;
      res.write(line({ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }));
      setTimeout(() => res.end(), Number(query.get("timeoutSeconds")) * 1000);
    });
    m.reflector.start();
    await eventually(() => expect(m.stub.requests).toHaveLength(3));
    expect(m.stub.requests.map((r) => r.query.resourceVersion)).toEqual([undefined, "10", "15"]);
    expect(m.statuses.filter((s) => s.kind === "watch-restart")).toEqual([
      { kind: "watch-restart", reason: "timeout", resourceVersion: "15", events: 1 },
    ]);
  });

  it("tears down a watch that goes silent, and resumes it without relisting", async () => {
    const m = await mirror(() => {}); // headers, then nothing: a half-open connection
    m.reflector.start();
    await eventually(() => expect(m.stub.requests).toHaveLength(3), 5_000);
    await m.stub.clientClosed(1);
    expect(m.stub.requests.map((r) => r.query.resourceVersion)).toEqual([undefined, "10", "10"]);
    expect(m.statuses.filter((s) => s.kind === "watch-restart")).toEqual([
      { kind: "watch-restart", reason: "inactive", resourceVersion: "10", events: 0 },
    ]);
  });
});
