import { ApiException, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest, type ThrottleRule } from "../src/index.ts";
import { call, failureStatus } from "./helpers.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
});
afterEach(async () => {
  await env.close();
});

const LIST = "/api/v1/secrets";
const GET = "/api/v1/namespaces/default/secrets/x";
const TOO_MANY = "Too many requests, please try again later.";

async function statuses(path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(env, "GET", path)).status);
  return out;
}

describe("throttling", () => {
  const rule: ThrottleRule = {
    verbs: ["list", "watch"],
    share: 0.5,
    retryAfterSeconds: 2,
    seed: 7,
  };

  it("answers a seeded share of the chosen verbs 429 with Retry-After, and leaves the others", async () => {
    env.faults.throttle(rule);
    const lists = await statuses(LIST, 40);
    const refused = lists.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThan(10);
    expect(refused).toBeLessThan(30);
    expect(lists.filter((s) => s !== 429).every((s) => s === 200)).toBe(true);
    expect(await statuses(GET, 10)).toEqual(Array(10).fill(404));
    env.faults.throttle(rule);
    expect(await statuses(LIST, 40)).toEqual(lists);
  });

  it("refuses with the Status and headers an overloaded API server sends, watches included", async () => {
    env.faults.throttle({ verbs: ["watch"], share: 1, retryAfterSeconds: 3 });
    const w = await call(env, "GET", "/api/v1/secrets?watch=true");
    expect([w.status, w.headers.get("retry-after")]).toEqual([429, "3"]);
    expect(w.json).toEqual(
      failureStatus(429, "TooManyRequests", TOO_MANY, { retryAfterSeconds: 3 }),
    );
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig());
    env.faults.throttle({ verbs: ["any"], share: 1 });
    const refused = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedSecret({ namespace: "default" })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiException);
    expect((refused as ApiException<unknown>).code).toBe(429);
    expect((refused as ApiException<unknown>).headers["retry-after"]).toBe("1");
  });

  it("lasts forMs, stops at a share of 0, and is cleared by reset", async () => {
    env.faults.throttle({ verbs: ["list"], share: 1, forMs: 300 });
    expect(await statuses(LIST, 2)).toEqual([429, 429]);
    await new Promise((r) => setTimeout(r, 350));
    expect(await statuses(LIST, 2)).toEqual([200, 200]);
    env.faults.throttle({ verbs: ["list"], share: 1 });
    env.faults.throttle({ verbs: ["list"], share: 0 });
    expect(await statuses(LIST, 1)).toEqual([200]);
    env.faults.throttle({ verbs: ["list"], share: 1 });
    env.faults.reset();
    expect(await statuses(LIST, 1)).toEqual([200]);
  });

  it("lets failNext rules go first, and is driven from the control path too", async () => {
    env.faults.failNext({ verb: "list", count: 1, status: 500 });
    const set = await call(env, "POST", "/__envtest/faults/throttle", {
      verbs: ["list"],
      share: 1,
    });
    expect(set.json).toEqual({ ok: true });
    expect(await statuses(LIST, 2)).toEqual([500, 429]);
    const bad = await call(env, "POST", "/__envtest/faults/throttle", {
      verbs: ["list"],
      share: 2,
    });
    expect(bad.status).toBe(400);
    expect(env.requests.summary().byVerb.list?.statuses).toEqual({ 500: 1, 429: 1 });
  });
});
