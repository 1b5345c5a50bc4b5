import { afterEach, describe, expect, it } from "vitest";
import { parseEnvtestArgs } from "../src/cli.ts";
import { type Envtest, type EnvtestOptions, startEnvtest } from "../src/index.ts";
import { call, failureStatus, openWatch } from "./helpers.ts";

let env: Envtest;
const start = async (options: EnvtestOptions = {}) => {
  env = await startEnvtest({ bookmarkIntervalMs: 50, ...options });
  return env;
};
afterEach(async () => {
  await env.close();
});

const W = "/api/v1/namespaces/default/secrets?watch=true";
const STREAMING = `${W}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`;

const summary = (e: { type: string; object: { metadata: { name?: string } } }) =>
  `${e.type} ${e.object.metadata.name ?? ""}`;

/** The 422 kube-apiserver answers for watch options, its causes as validateWatchOptions finds them. */
function refused(...causes: { field: string; detail: string }[]) {
  const errors = causes.map((c) => `${c.field}: Forbidden: ${c.detail}`);
  const list = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
  return failureStatus(422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${list}`, {
    group: "meta.k8s.io",
    kind: "ListOptions",
    causes: causes.map((c) => ({
      reason: "FieldValueForbidden",
      message: `Forbidden: ${c.detail}`,
      field: c.field,
    })),
  });
}
const GATE_OFF = {
  field: "sendInitialEvents",
  detail: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
};
const NO_MATCH = {
  field: "resourceVersionMatch",
  detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
};

describe("streaming lists (sendInitialEvents)", () => {
  it("sends the state, the initial-events-end bookmark at its resourceVersion, then live events", async () => {
    await start();
    env.apply({ namespace: "default", name: "a" });
    env.apply({ namespace: "default", name: "b" });
    const at = String(env.state.resourceVersion);
    const w = await openWatch(env, `${STREAMING}&allowWatchBookmarks=true`);
    const [a, b, end] = await w.take(3);
    env.apply({ namespace: "default", name: "c" });
    // The next event but the periodic bookmarks a busy machine may interleave.
    let live = await w.next();
    while (live?.type === "BOOKMARK") live = await w.next();
    w.close();
    expect({
      events: [a, b, live].map((e) => (e === undefined ? "none" : summary(e))),
      end: end?.type === "BOOKMARK" ? end.object.metadata : end,
    }).toEqual({
      events: ["ADDED a", "ADDED b", "ADDED c"],
      end: {
        resourceVersion: at,
        creationTimestamp: null,
        annotations: { "k8s.io/initial-events-end": "true" },
      },
    });
  });

  it("serves one without allowWatchBookmarks, as kube-apiserver does: no bookmark ends its initial events", async () => {
    await start();
    env.apply({ namespace: "default", name: "a" });
    const w = await openWatch(env, STREAMING);
    expect(summary(await w.next())).toBe("ADDED a");
    // Several bookmark intervals: a watch that asked for none gets none.
    await new Promise((r) => setTimeout(r, 300));
    w.close();
    expect({ status: w.status, lines: w.lines.length }).toEqual({ status: 200, lines: 1 });
  });

  it("refuses sendInitialEvents without resourceVersionMatch=NotOlderThan", async () => {
    await start();
    const res = await call(env, "GET", `${W}&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect({ status: res.status, body: res.json }).toEqual({
      status: 422,
      body: refused(NO_MATCH),
    });
  });

  it("refuses a streaming list while the WatchList feature gate is off, and serves plain watches", async () => {
    await start({ featureGates: { WatchList: false } });
    env.apply({ namespace: "default", name: "a" });
    const off = await call(env, "GET", `${STREAMING}&allowWatchBookmarks=true`);
    const both = await call(env, "GET", `${W}&sendInitialEvents=true`);
    const plain = await openWatch(env, `${W}&resourceVersion=0&allowWatchBookmarks=true`);
    const added = summary(await plain.next());
    plain.close();
    expect({
      off: [off.status, off.json],
      both: [both.status, both.json],
      added,
      gates: env.featureGates,
    }).toEqual({
      off: [422, refused(GATE_OFF)],
      both: [422, refused(NO_MATCH, GATE_OFF)],
      added: "ADDED a",
      gates: { WatchList: false },
    });
  });

  it("switches the gate for later requests, programmatically and on the control path", async () => {
    await start();
    const streaming = async () => (await call(env, "GET", `${STREAMING}&timeoutSeconds=1`)).status;
    const codes = [await streaming()];
    env.setFeatureGates({ WatchList: false });
    codes.push(await streaming());
    const on = await call(env, "POST", "/__envtest/feature-gates", { WatchList: true });
    codes.push(await streaming());
    const unknown = await call(env, "POST", "/__envtest/feature-gates", { Other: true });
    const read = await call(env, "GET", "/__envtest/feature-gates");
    expect({ codes, on: on.json, unknown: unknown.status, read: read.json }).toEqual({
      codes: [200, 422, 200],
      on: { WatchList: true },
      unknown: 400,
      read: { WatchList: true },
    });
  });

  it("counts streaming lists, and every request per resource and verb", async () => {
    await start();
    env.apply({ namespace: "default", name: "a" });
    const w = await openWatch(env, `${STREAMING}&allowWatchBookmarks=true`);
    await w.take(2);
    w.close();
    await call(env, "GET", "/api/v1/namespaces");
    await call(env, "GET", "/api/v1/namespaces/default/secrets");
    env.setFeatureGates({ WatchList: false });
    await call(env, "GET", `${STREAMING}&allowWatchBookmarks=true`);
    const s = env.requests.summary();
    const figures = (t: { requests: number; streamedLists?: number } | undefined) => [
      t?.requests,
      t?.streamedLists,
    ];
    expect({
      secretWatches: figures(s.byResource.secrets?.watch),
      secretLists: figures(s.byResource.secrets?.list),
      namespaceLists: figures(s.byResource.namespaces?.list),
      watches: figures(s.byVerb.watch),
      refused: s.byResource.secrets?.watch?.statuses,
    }).toEqual({
      secretWatches: [2, 1],
      secretLists: [1, undefined],
      namespaceLists: [1, undefined],
      watches: [2, 1],
      refused: { 200: 1, 422: 1 },
    });
  });

  it("takes --feature-gates as kube-apiserver writes it", () => {
    expect([
      parseEnvtestArgs(["--feature-gates", "WatchList=false"]),
      parseEnvtestArgs(["--feature-gates", "WatchList=off"]),
      parseEnvtestArgs(["--feature-gates", "ConsistentListFromCache=true"]),
    ]).toEqual([
      { seed: "none", featureGates: { WatchList: false } },
      "--feature-gates: expected WatchList=true|false, got 'WatchList=off'",
      "--feature-gates: expected WatchList=true|false, got 'ConsistentListFromCache=true'",
    ]);
  });
});
