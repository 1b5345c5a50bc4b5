import { CoreV1Api, KubeConfig, makeInformer, type V1Secret } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import {
  call,
  failureStatus,
  openWatch,
  putSecret,
  SETTLE,
  DEFAULT_WATCH as W,
} from "./helpers.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
});
afterEach(async () => {
  await env.close();
});

const tooOld = (requested: string, restartRv: number) =>
  failureStatus(410, "Expired", `too old resource version: ${requested} (${restartRv})`);

describe("restart in place, losing the watch history", () => {
  it("cuts every connection, refuses new ones while down, then answers 410 to resumes from before", async () => {
    const a = putSecret(env, "a");
    const w = await openWatch(env, `${W}&resourceVersion=${a.metadata.resourceVersion}`);
    putSecret(env, "b");
    expect((await w.next()).object.metadata.name).toBe("b");
    const restarted = env.restart({ downMs: 300 });
    expect(await w.ended).toBe("error");
    await expect(fetch(`${env.url}/api/v1/secrets`)).rejects.toThrow();
    await restarted;
    const restartRv = env.state.resourceVersion;
    const list = await call(env, "GET", "/api/v1/namespaces/default/secrets");
    expect((list.json as { items: unknown[] }).items).toHaveLength(2);
    const resumed = await openWatch(env, `${W}&resourceVersion=${a.metadata.resourceVersion}`);
    expect(resumed.status).toBe(200);
    expect(await resumed.next()).toEqual({
      type: "ERROR",
      object: tooOld(a.metadata.resourceVersion, restartRv),
    });
    expect(await resumed.ended).toBe("end");
    const fresh = await openWatch(env, `${W}&resourceVersion=${restartRv}`);
    putSecret(env, "c");
    expect((await fresh.next()).object.metadata.name).toBe("c");
    fresh.close();
  });

  it("answers 503 with Retry-After while down in unavailable mode, ending watches cleanly", async () => {
    const w = await openWatch(env, W);
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    const restarted = env.restart({ downMs: 300, down: "unavailable" });
    expect(await w.ended).toBe("end");
    const during = await call(env, "GET", "/api/v1/secrets");
    expect([during.status, during.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(during.json).toEqual(
      failureStatus(
        503,
        "ServiceUnavailable",
        "the server is currently unable to handle the request",
        {
          retryAfterSeconds: 1,
        },
      ),
    );
    await restarted;
    expect((await call(env, "GET", "/api/v1/secrets")).status).toBe(200);
  });

  it("makes a client-node informer relist and carry on from the new history", async () => {
    const rv = putSecret(env, "a").metadata.resourceVersion;
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig());
    const path = "/api/v1/namespaces/default/secrets";
    const api = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Secret>(kc, path, () =>
      api.listNamespacedSecret({ namespace: "default" }),
    );
    informer.on("error", () => setTimeout(() => void informer.start(), 20));
    await informer.start();
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    await env.restart({ downMs: 100 });
    putSecret(env, "b");
    const names = () =>
      informer
        .list()
        .map((s) => s.metadata?.name)
        .sort();
    await vi.waitFor(() => expect(names()).toEqual(["a", "b"]), { ...SETTLE, timeout: 10_000 });
    await informer.stop();
    const log = env.requests
      .entries()
      .map((e) => `${e.verb} ${e.resourceVersion ?? "-"} ${e.status}`);
    // The resume from before the restart gets its 410 as a watch ERROR event, then a relist.
    expect(log.slice(0, 4)).toEqual([
      "list - 200",
      `watch ${rv} 200`,
      `watch ${rv} 200`,
      "list - 200",
    ]);
  });

  it("restarts from the control path after answering", async () => {
    const a = putSecret(env, "a");
    expect((await call(env, "POST", "/__envtest/restart", { downMs: 50 })).json).toEqual({
      ok: true,
    });
    const exact = `/api/v1/secrets?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`;
    await vi.waitFor(async () => expect((await call(env, "GET", exact)).status).toBe(410), SETTLE);
  });
});

describe("restart with the state carried over", () => {
  it("carries objects, resourceVersion and history over a restart on the same port", async () => {
    const a = env.apply({ namespace: "default", name: "a", data: { v: "1" } });
    putSecret(env, "b");
    const { port, state } = env;
    await env.close();
    env = await startEnvtest({ port, state });
    expect(env.port).toBe(port);
    const got = await call(env, "GET", "/api/v1/namespaces/default/secrets/a");
    expect(got.json).toEqual(a);
    const w = await openWatch(env, `${W}&resourceVersion=${a.metadata.resourceVersion}`);
    expect((await w.next()).object.metadata.name).toBe("b");
    const c = putSecret(env, "c");
    expect(Number(c.metadata.resourceVersion)).toBe(state.resourceVersion);
    expect((await w.next()).object.metadata.name).toBe("c");
    w.close();
  });
});
