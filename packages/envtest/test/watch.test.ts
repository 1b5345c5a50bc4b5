import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { call, openWatch } from "./helpers.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest({ bookmarkIntervalMs: 50, historySize: 5 });
});
afterEach(async () => {
  await env.close();
});

function summary(e: { type: string; object: { metadata: { name?: string } } }) {
  return `${e.type} ${e.object.metadata.name ?? ""}`;
}
const W = "/api/v1/namespaces/default/secrets?watch=true";

describe("watch", () => {
  it("streams chunked NDJSON with headers flushed before any event", async () => {
    const w = await openWatch(env, W);
    expect(w.status).toBe(200);
    expect(w.headers["content-type"]).toBe("application/json");
    expect(w.headers["transfer-encoding"]).toBe("chunked");
    env.apply({ namespace: "default", name: "a", data: { k: "1" } });
    const e = await w.next();
    expect(e.type).toBe("ADDED");
    expect(e.object).toMatchObject({
      kind: "Secret",
      apiVersion: "v1",
      metadata: { name: "a", namespace: "default" },
    });
    w.close();
  });

  it("starts with synthetic ADDED events when resourceVersion is unset or 0, then live events", async () => {
    env.apply({ namespace: "default", name: "a" });
    env.apply({ namespace: "default", name: "b" });
    for (const path of [W, `${W.replace("watch=true", "watch=1")}&resourceVersion=0`]) {
      const w = await openWatch(env, path);
      expect((await w.take(2)).map(summary)).toEqual(["ADDED a", "ADDED b"]);
      env.apply({ namespace: "default", name: "a", data: { k: String(Math.random()) } });
      expect(summary(await w.next())).toBe("MODIFIED a");
      w.close();
    }
  });

  it("resumes after resourceVersion N with exactly the later events; DELETED carries the deletion's resourceVersion", async () => {
    const a = env.apply({ namespace: "default", name: "a", data: { v: "1" } });
    env.apply({ namespace: "default", name: "a", data: { v: "2" } });
    env.delete("default", "a");
    const w = await openWatch(env, `${W}&resourceVersion=${a.metadata.resourceVersion}`);
    const [modified, deleted] = await w.take(2);
    expect(modified?.type).toBe("MODIFIED");
    expect(deleted?.type).toBe("DELETED");
    expect(Number(deleted?.object.metadata.resourceVersion)).toBe(env.state.resourceVersion);
    expect(deleted?.object.data).toEqual({ v: Buffer.from("2").toString("base64") });
    w.close();
  });

  it("waits for a future resourceVersion: events at or below it are not sent", async () => {
    const future = env.state.resourceVersion + 2;
    const w = await openWatch(env, `${W}&resourceVersion=${future}`);
    env.apply({ namespace: "default", name: "one" });
    env.apply({ namespace: "default", name: "two" });
    env.apply({ namespace: "default", name: "three" });
    expect(summary(await w.next())).toBe("ADDED three");
    w.close();
  });

  it("answers 200 with one ERROR 410 Expired event, then closes, for a resourceVersion older than the history", async () => {
    const first = env.apply({ namespace: "default", name: "a" });
    for (let i = 0; i < 8; i++)
      env.apply({ namespace: "default", name: "a", data: { i: String(i) } });
    const w = await openWatch(env, `${W}&resourceVersion=${first.metadata.resourceVersion}`);
    expect(w.status).toBe(200);
    const e = await w.next();
    expect(e).toEqual({
      type: "ERROR",
      object: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `too old resource version: ${first.metadata.resourceVersion} (${env.state.history.compactedRv})`,
        reason: "Expired",
        code: 410,
      },
    });
    expect(await w.ended).toBe("end");
  });

  it("answers 410 for any older resourceVersion after a compaction, but resumes from the current one", async () => {
    const a = env.apply({ namespace: "default", name: "a" });
    env.apply({ namespace: "default", name: "b" });
    env.faults.compact();
    const old = await openWatch(env, `${W}&resourceVersion=${a.metadata.resourceVersion}`);
    expect((await old.next()).object.code).toBe(410);
    const current = await openWatch(env, `${W}&resourceVersion=${env.state.resourceVersion}`);
    env.apply({ namespace: "default", name: "c" });
    expect(summary(await current.next())).toBe("ADDED c");
    current.close();
  });

  it("sends BOOKMARK events carrying only the resourceVersion when allowWatchBookmarks=true", async () => {
    env.apply({ namespace: "other", name: "x" });
    const w = await openWatch(
      env,
      `${W}&allowWatchBookmarks=true&resourceVersion=${env.state.resourceVersion}`,
    );
    env.apply({ namespace: "other", name: "y" });
    const line = await w.nextLine(2000);
    expect(JSON.parse(line)).toEqual({
      type: "BOOKMARK",
      object: {
        kind: "Secret",
        apiVersion: "v1",
        metadata: { resourceVersion: String(env.state.resourceVersion), creationTimestamp: null },
      },
    });
    w.close();
  });

  it("never sends bookmarks unless asked", async () => {
    const w = await openWatch(env, `${W}&resourceVersion=${env.state.resourceVersion}`);
    await new Promise((r) => setTimeout(r, 200));
    expect(w.lines).toEqual([]);
    w.close();
  });

  it("ends the stream cleanly after timeoutSeconds", async () => {
    const w = await openWatch(env, `${W}&timeoutSeconds=1`);
    const started = Date.now();
    expect(await w.ended).toBe("end");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("turns objects entering a label selection into ADDED and leaving it into DELETED", async () => {
    env.apply({ namespace: "default", name: "a", labels: { team: "x" } });
    const w = await openWatch(env, `${W}&labelSelector=team%3Dx`);
    expect(summary(await w.next())).toBe("ADDED a");
    env.apply({ namespace: "default", name: "b", labels: { team: "y" } });
    env.apply({ namespace: "default", name: "a", labels: { team: "y" } });
    const left = await w.next();
    expect(summary(left)).toBe("DELETED a");
    expect(left.object.metadata.resourceVersion).toBe(String(env.state.resourceVersion));
    env.apply({ namespace: "default", name: "b", labels: { team: "x" } });
    expect(summary(await w.next())).toBe("ADDED b");
    env.apply({ namespace: "default", name: "b", labels: { team: "x" }, data: { k: "v" } });
    expect(summary(await w.next())).toBe("MODIFIED b");
    w.close();
  });

  it("filters a watch by field selector, and watches one object through the legacy /watch/ path", async () => {
    const w = await openWatch(env, `${W}&fieldSelector=metadata.name%3Dtarget`);
    const legacy = await openWatch(env, "/api/v1/watch/namespaces/default/secrets/target");
    env.apply({ namespace: "default", name: "other" });
    env.apply({ namespace: "default", name: "target" });
    expect(summary(await w.next())).toBe("ADDED target");
    expect(summary(await legacy.next())).toBe("ADDED target");
    expect(w.lines).toHaveLength(1);
    w.close();
    legacy.close();
  });

  it("answers 400 for an unsupported field selector on a watch", async () => {
    const res = await call(env, "GET", `${W}&fieldSelector=data.x%3Dy`);
    expect(res.status).toBe(400);
  });

  it("implements sendInitialEvents with an initial-events-end BOOKMARK, and refuses it without NotOlderThan", async () => {
    env.apply({ namespace: "default", name: "a" });
    const w = await openWatch(
      env,
      `${W}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    expect(summary(await w.next())).toBe("ADDED a");
    const end = await w.next();
    expect(end.type).toBe("BOOKMARK");
    expect(end.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" });
    w.close();
    const refused = await call(env, "GET", `${W}&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect(refused.status).toBe(422);
  });

  it("watches every namespace at /api/v1/secrets", async () => {
    const w = await openWatch(env, "/api/v1/secrets?watch=true");
    env.apply({ namespace: "one", name: "a" });
    env.apply({ namespace: "two", name: "b" });
    expect((await w.take(2)).map(summary)).toEqual(["ADDED a", "ADDED b"]);
    w.close();
  });
});
