// Streaming lists between the reflector, the HTTP ListWatch and envtest, which serves them as
// kube-apiserver does, and refuses them as it does with the WatchList feature gate off.

import type { Envtest, RequestLogEntry } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Reflector } from "../../src/kube/cache/reflector.ts";
import type { ReflectorStatus } from "../../src/kube/cache/reflector-status.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { createListWatch } from "../../src/kube/rest/client.ts";
import { waitUntil } from "../support/wait.ts";
import { envtestFor, transportFor } from "../support/world.ts";

let envtest: Envtest;
const running: { reflector: Reflector; close: () => Promise<void> }[] = [];

beforeEach(async () => {
  envtest = await envtestFor();
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.reflector.stop();
    await r.close();
  }
  await envtest.close();
});

/**
 * A reflector of one namespace's Secrets on envtest, its deliveries and statuses recorded; it has
 * synced when this resolves, unless `started` says to resolve once it started.
 */
async function reflectorOf(
  namespace: string,
  streamingLists = new StreamingLists(),
  until: "synced" | "started" = "synced",
) {
  const { transport, close } = await transportFor(envtest);
  const log: string[] = [];
  const statuses: ReflectorStatus[] = [];
  const reflector = new Reflector({
    name: namespace,
    listWatch: createListWatch(transport, { namespace }),
    watchTimeoutSeconds: 30,
    backoff: { initialMs: 50, capMs: 200 },
    relistSpreadMs: 0,
    streamingLists,
    handler: {
      onEvent: ({ type, object: { metadata: m } }) => log.push(`${type} ${m.name}`),
      onSynced: () => log.push("SYNCED"),
    },
    onStatus: (s) => statuses.push(s),
  });
  running.push({ reflector, close });
  reflector.start();
  if (until === "synced")
    await waitUntil(() => reflector.hasSynced(), { what: `${namespace} synced` });
  return { reflector, log, statuses };
}

const write = (name: string, value = String(Math.random())) =>
  envtest.apply({ namespace: "tenant-a", name, data: { v: value } }).metadata.resourceVersion;

const secretRequests = (verb: "list" | "watch") =>
  envtest.requests.entries().filter((e) => e.resource === "secrets" && e.verb === verb);
const isStreaming = (e: RequestLogEntry) => e.query.sendInitialEvents === "true";
const of = <K extends ReflectorStatus["kind"]>(statuses: ReflectorStatus[], kind: K) =>
  statuses.filter((s): s is Extract<ReflectorStatus, { kind: K }> => s.kind === kind);

/** Every open watch ends, and resuming it gets 410: the history no longer holds a write it missed. */
function expireWatches(): void {
  envtest.faults.stall(true);
  write("missed");
  envtest.faults.compact();
  envtest.faults.dropWatches();
  envtest.faults.stall(false);
}

describe("Reflector on envtest: streaming lists", () => {
  it("syncs from the initial events at their end bookmark, with no list request", async () => {
    write("a");
    write("b");
    envtest.apply({ namespace: "tenant-b", name: "elsewhere" });
    const at = String(envtest.state.resourceVersion);
    const r = await reflectorOf("tenant-a");
    const [watch] = secretRequests("watch");
    expect({
      log: r.log,
      listed: of(r.statuses, "listed"),
      lists: envtest.requests.summary().byResource.secrets?.list,
      watch: { query: watch?.query, status: watch?.status, objects: watch?.objects },
    }).toEqual({
      log: ["ADDED a", "ADDED b", "SYNCED"],
      listed: [{ kind: "listed", mode: "watch-list", resourceVersion: at, items: 2 }],
      lists: undefined,
      watch: {
        query: {
          watch: "1",
          allowWatchBookmarks: "true",
          sendInitialEvents: "true",
          resourceVersionMatch: "NotOlderThan",
          timeoutSeconds: expect.stringMatching(/^\d+$/),
        },
        status: 200,
        objects: 2,
      },
    });
  });

  it("starts a streaming list over when its watch drops before the end bookmark", async () => {
    for (let i = 0; i < 100; i++) write(`s${String(i).padStart(3, "0")}`);
    // Each line cut into writes a millisecond apart: the initial events take a while to arrive.
    envtest.faults.chunking({ mode: "split", seed: 3 });
    const r = await reflectorOf("tenant-a", new StreamingLists(), "started");
    await waitUntil(() => r.log.length > 0, { what: "the first initial event" });
    envtest.faults.dropWatches();
    envtest.faults.chunking({ mode: "normal" });
    await waitUntil(() => r.reflector.hasSynced(), { what: "synced" });
    expect({
      streaming: secretRequests("watch").map(isStreaming),
      lists: secretRequests("list").length,
      errors: of(r.statuses, "error").map((s) => s.phase),
      added: r.log.filter((l) => l.startsWith("ADDED")).length,
      synced: r.log.filter((l) => l === "SYNCED").length,
      listed: of(r.statuses, "listed"),
    }).toEqual({
      streaming: [true, true],
      lists: 0,
      errors: ["list"],
      added: 100,
      synced: 1,
      listed: [
        {
          kind: "listed",
          mode: "watch-list",
          resourceVersion: String(envtest.state.resourceVersion),
          items: 100,
        },
      ],
    });
  });

  it("resumes a watch dropped after sync from its last resourceVersion, with no new initial events", async () => {
    write("a");
    const r = await reflectorOf("tenant-a");
    const seen = write("b");
    await waitUntil(() => r.log.includes("ADDED b"), { what: "b" });
    envtest.faults.dropWatches();
    write("a");
    await waitUntil(() => r.log.includes("MODIFIED a"), { what: "a again" });
    const watches = secretRequests("watch");
    expect({
      streaming: watches.map(isStreaming),
      resumedFromSeen: Number(watches[1]?.resourceVersion) >= Number(seen),
      lists: secretRequests("list").length,
      log: r.log,
    }).toEqual({
      streaming: [true, false],
      resumedFromSeen: true,
      lists: 0,
      log: ["ADDED a", "SYNCED", "ADDED b", "MODIFIED a"],
    });
  });

  it("streams again after 410 Gone, and drops what was deleted while it was away", async () => {
    write("a");
    write("b");
    const r = await reflectorOf("tenant-a");
    envtest.faults.stall(true);
    envtest.delete("tenant-a", "b");
    write("a");
    envtest.faults.compact();
    envtest.faults.dropWatches();
    envtest.faults.stall(false);
    await waitUntil(() => r.log.includes("DELETED b"), { what: "b deleted" });
    const watches = secretRequests("watch");
    expect({
      streaming: watches.map(isStreaming),
      expired: watches.map((w) => w.watchError ?? null),
      lists: secretRequests("list").length,
      relists: of(r.statuses, "relist"),
      log: r.log,
    }).toEqual({
      streaming: [true, false, true],
      expired: [null, 410, null],
      lists: 0,
      relists: [{ kind: "relist", reason: "expired" }],
      log: ["ADDED a", "ADDED b", "SYNCED", "MODIFIED a", "DELETED b"],
    });
  });

  it("falls back to a paged list on the 422 of a server with WatchList off, and the process remembers", async () => {
    envtest.setFeatureGates({ WatchList: false });
    write("a");
    const shared = new StreamingLists();
    const first = await reflectorOf("tenant-a", shared);
    const second = await reflectorOf("tenant-b", shared);
    // Switched on now, streaming lists would be served: the relists after a 410 still list.
    envtest.setFeatureGates({ WatchList: true });
    expireWatches();
    const relisted = (r: { statuses: ReflectorStatus[] }) => of(r.statuses, "listed").length === 2;
    await waitUntil(() => relisted(first) && relisted(second), { what: "both relisted" });
    const watches = secretRequests("watch");
    expect({
      refusedWatches: watches.filter(isStreaming).map((w) => w.status),
      lists: secretRequests("list").map((e) => e.namespace),
      refusal: [
        ...of(first.statuses, "streaming-refused"),
        ...of(second.statuses, "streaming-refused"),
      ],
      listed: of(first.statuses, "listed").map((s) => s.mode),
      log: first.log,
    }).toEqual({
      refusedWatches: [422],
      lists: ["tenant-a", "tenant-b", expect.any(String), expect.any(String)],
      refusal: [
        {
          kind: "streaming-refused",
          error: {
            kind: "http",
            status: 422,
            reason: "Invalid",
            message:
              'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          },
        },
      ],
      listed: ["list", "list"],
      log: ["ADDED a", "SYNCED", "ADDED missed"],
    });
  });

  it("falls back to a paged list on the 400 of an older server", async () => {
    envtest.faults.failNext({ verb: "watch", count: 1, status: 400 });
    write("a");
    const r = await reflectorOf("tenant-a");
    expect({
      statuses: r.statuses.filter((s) => s.kind !== "watch-restart").map((s) => s.kind),
      refused: of(r.statuses, "streaming-refused").map(
        (s) => s.error.kind === "http" && s.error.status,
      ),
      lists: secretRequests("list").length,
      log: r.log,
    }).toEqual({
      statuses: ["streaming-refused", "listed"],
      refused: [400],
      lists: 1,
      log: ["ADDED a", "SYNCED"],
    });
  });
});
