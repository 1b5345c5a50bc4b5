// Watch streams with garbage in them: random bytes, truncated lines and plain text injected into
// open watches (envtest faults.injectGarbage), with lines split across writes or coalesced into
// one (faults.chunking), mixed with drops, clean ends and real changes. The reflector recovers
// by resuming or relisting, the mirror converges to what the API server holds, and a `serve`
// process fed the same faults stays up and converges too.

import type { Envtest, GarbageKind } from "@replica-mirror/envtest";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ReflectorStatus } from "../../src/kube/reflector-status.ts";
import { decodeWatchLine } from "../../src/kube/wire.ts";
import { silentObserver } from "../../src/mirror/observer.ts";
import { get, getJson } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { appState, startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { size, waitUntil } from "../support/wait.ts";
import { envtestFor, REGISTRY_NAME, REGISTRY_NS, registryDoc } from "../support/world.ts";
import { kubeconfigFor } from "./support/world.ts";

const APPS = [
  {
    name: "shop",
    hostnames: ["shop.example.com"],
    namespace: "tenant-a",
    secret: "shop-credentials",
  },
  {
    name: "blog",
    hostnames: ["blog.example.com"],
    namespace: "tenant-b",
    secret: "blog-credentials",
  },
  {
    name: "wiki",
    hostnames: ["wiki.example.com"],
    namespace: "tenant-a",
    secret: "wiki-credentials",
  },
] as const;

type Action =
  | { readonly kind: "put"; readonly app: number; readonly value: string }
  | { readonly kind: "delete"; readonly app: number }
  | { readonly kind: "unrelated"; readonly value: string }
  | { readonly kind: "registry"; readonly apps: number }
  | { readonly kind: "garbage"; readonly garbage: GarbageKind }
  | {
      readonly kind: "chunking";
      readonly mode: "normal" | "split" | "coalesce";
      readonly seed: number;
    }
  | { readonly kind: "drop" }
  | { readonly kind: "end" }
  | { readonly kind: "pause"; readonly ms: number };

const appIndex = fc.nat({ max: APPS.length - 1 });
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      app: appIndex,
      value: fc.string({ maxLength: 12 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), app: appIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("unrelated" as const),
      value: fc.string({ maxLength: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("registry" as const),
      apps: fc.integer({ min: 1, max: APPS.length }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      garbage: fc.constantFrom<GarbageKind>("bytes", "truncated", "non-json"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("chunking" as const),
      mode: fc.constantFrom("normal" as const, "split" as const, "coalesce" as const),
      seed: fc.nat({ max: 1_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "drop" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "end" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      ms: fc.integer({ min: 0, max: 60 }),
    }),
  },
);

/** The state a converged mirror must serve, from what the API server holds. */
function truth(envtest: Envtest, apps: number): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const a of APPS.slice(0, apps)) {
    const token = envtest.get(a.namespace, a.secret)?.data?.token;
    const value = token === undefined ? null : Buffer.from(token, "base64").toString("utf8");
    out[a.name] = value === "" ? null : value;
  }
  return out;
}

function served(m: TestSidecar): Record<string, string | null> | undefined {
  const s = m.holder.current();
  if (s === null) return undefined;
  const out: Record<string, string | null> = {};
  for (const a of APPS) {
    const st = appState(m.holder, a.name);
    if (typeof st === "object") out[a.name] = st.ready ? st.value : null;
  }
  return out;
}

function writeApps(envtest: Envtest, apps: number): void {
  envtest.apply({
    namespace: REGISTRY_NS,
    name: REGISTRY_NAME,
    data: {
      "registry.json": JSON.stringify(
        registryDoc(
          APPS.slice(0, apps).map((a) => ({
            name: a.name,
            hostnames: [...a.hostnames],
            namespace: a.namespace,
            secret: a.secret,
          })),
        ),
      ),
    },
  });
}

function perform(envtest: Envtest, a: Action, state: { apps: number }): Promise<void> | undefined {
  switch (a.kind) {
    case "put": {
      const app = APPS[a.app]!;
      envtest.apply({ namespace: app.namespace, name: app.secret, data: { token: a.value } });
      return;
    }
    case "delete": {
      const app = APPS[a.app]!;
      envtest.delete(app.namespace, app.secret);
      return;
    }
    case "unrelated":
      envtest.apply({ namespace: "tenant-a", name: "unrelated", data: { token: a.value } });
      return;
    case "registry":
      state.apps = a.apps;
      writeApps(envtest, a.apps);
      return;
    case "garbage":
      envtest.faults.injectGarbage(a.garbage);
      return;
    case "chunking":
      envtest.faults.chunking({ mode: a.mode, seed: a.seed });
      return;
    case "drop":
      envtest.faults.dropWatches();
      return;
    case "end":
      envtest.faults.endWatches();
      return;
    case "pause":
      return new Promise((r) => setTimeout(r, a.ms));
  }
}

describe("one corrupted watch line", () => {
  // wire.ts promises decode errors name a path and a size, never a value: they are logged.
  it("decodes without throwing, and its error never quotes the Secret data it carried", () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{24}$/);
    const flip = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(
        secret,
        fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "bogus"),
        fc.option(fc.nat()),
        fc.array(flip, { maxLength: 4 }),
        fc.boolean(),
        (value, type, cut, flips, retype) => {
          const b64 = Buffer.from(value).toString("base64");
          const object = {
            kind: "Secret",
            metadata: { name: "s", namespace: "n", resourceVersion: "7" },
            data: { token: retype ? [b64] : b64, [`k${value.slice(0, 3)}`]: retype ? 1 : b64 },
            stringData: { raw: value },
          };
          const bytes = Buffer.from(JSON.stringify({ type, object }));
          for (const [at, byte] of flips) bytes[at % bytes.length] = byte;
          const line = bytes
            .subarray(0, cut === null ? bytes.length : cut % (bytes.length + 1))
            .toString("utf8");
          const r = decodeWatchLine(line);
          if (r.ok) return;
          for (const v of [value, b64])
            for (let i = 0; i + 8 <= v.length; i++)
              if (r.error.message.includes(v.slice(i, i + 8)))
                throw new Error(`"${r.error.message}" quotes "${v.slice(i, i + 8)}"`);
        },
      ),
      { numRuns: size(2_000, 50_000) },
    );
  });
});

describe("the reflector and the mirror under garbage in the watch stream", () => {
  let envtest: Envtest;
  let m: TestSidecar;
  const statuses: ReflectorStatus[] = [];

  beforeEach(async () => {
    statuses.length = 0;
    envtest = await envtestFor();
    envtest.apply({ namespace: "tenant-a", name: "shop-credentials", data: { token: "s0" } });
    envtest.apply({ namespace: "tenant-b", name: "blog-credentials", data: { token: "b0" } });
    writeApps(envtest, APPS.length);
    m = await startTestSidecar(envtest, {
      observer: { ...silentObserver, reflector: (_name, status) => statuses.push(status) },
      watchTimeoutSeconds: 5,
    });
    await waitUntil(() => m.holder.current() ?? undefined, {
      timeoutMs: 10_000,
      what: "first Snapshot",
    });
  });
  afterEach(async () => {
    await m.stop();
    await envtest.close();
  });

  it("converges to the API server's state after any sequence of garbage, chunking, drops and changes", async () => {
    const state = { apps: APPS.length };
    let injected = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 2, maxLength: 14 }), async (actions) => {
        for (const a of actions) {
          if (a.kind === "garbage") injected += envtest.openWatches;
          await perform(envtest, a, state);
        }
        const want = truth(envtest, state.apps);
        // A watch that carried no event since the garbage resumes when it ends (timeout 5-10 s
        // plus grace): a change afterwards is what the mirror must see promptly.
        await waitUntil(
          () => (JSON.stringify(served(m)) === JSON.stringify(want) ? true : undefined),
          {
            timeoutMs: 20_000,
            what: `the mirror to serve ${JSON.stringify(want)} (serves ${JSON.stringify(served(m))})`,
          },
        );
      }),
      { numRuns: size(15, 150) },
    );
    const restarts = statuses.filter((s) => s.kind === "watch-restart");
    const by = (k: string) =>
      restarts.filter((s) => s.kind === "watch-restart" && s.reason === k).length;
    const relists = statuses.filter((s) => s.kind === "relist" && s.reason === "decode").length;
    console.log(
      `watch garbage: ${injected} bad lines delivered; restarts decode=${by("decode")} dropped=${by("dropped")} closed=${by("closed")} timeout=${by("timeout")} inactive=${by("inactive")}; relists(decode)=${relists}`,
    );
    expect(injected === 0 || by("decode") > 0).toBe(true);
    expect(statuses.filter((s) => s.kind === "handler-error")).toEqual([]);
    expect(statuses.filter((s) => s.kind === "error" && s.phase === "internal")).toEqual([]);
  }, 240_000);

  it("relists after bad lines in a row and loses nothing changed in between", async () => {
    // A bad line in every open watch, then a change, until the reflectors stop trusting the
    // stream and relist; the server-side count of open watches lags a client's reconnect, so
    // a round may miss a watch, and the loop simply goes on.
    let last = "";
    for (let i = 0; i < 30; i++) {
      if (statuses.some((s) => s.kind === "relist" && s.reason === "decode")) break;
      const before = statuses.length;
      envtest.faults.injectGarbage((["bytes", "truncated", "non-json"] as const)[i % 3]!);
      last = `during-${i}`;
      envtest.apply({ namespace: "tenant-a", name: "shop-credentials", data: { token: last } });
      await waitUntil(
        () =>
          statuses.slice(before).some((s) => s.kind === "watch-restart" && s.reason === "decode")
            ? true
            : undefined,
        { timeoutMs: 2_000, what: `a decode restart in round ${i}` },
      ).catch(() => undefined);
      await waitUntil(() => (envtest.openWatches === 2 ? true : undefined), {
        timeoutMs: 5_000,
        what: "watches back",
      });
    }
    expect(statuses.some((s) => s.kind === "relist" && s.reason === "decode")).toBe(true);
    await waitUntil(
      () =>
        JSON.stringify(served(m)) === JSON.stringify(truth(envtest, APPS.length))
          ? true
          : undefined,
      { timeoutMs: 10_000, what: "convergence" },
    );
    expect(served(m)?.shop).toBe(last);
  }, 60_000);
});

describe("`serve` as a process under garbage in the watch stream", () => {
  let envtest: Envtest;
  let kubeconfig: { path: string; remove: () => Promise<void> };
  let sidecar: SidecarProcess;

  beforeAll(async () => {
    envtest = await envtestFor();
    envtest.apply({ namespace: "tenant-a", name: "shop-credentials", data: { token: "s0" } });
    writeApps(envtest, APPS.length);
    kubeconfig = await kubeconfigFor(envtest);
    sidecar = await startSidecarProcess({
      kubeconfig: kubeconfig.path,
      watchTimeoutSeconds: 1,
      logLevel: "debug",
    });
  }, 30_000);
  afterAll(async () => {
    await sidecar?.stop();
    await envtest?.close();
    await kubeconfig?.remove();
  });

  const secretVersions = async () => {
    const r = await getJson<{ apps?: { name: string; secretResourceVersion: string | null }[] }>(
      sidecar.dataPort,
      "/v1/apps",
    );
    return Object.fromEntries((r.apps ?? []).map((a) => [a.name, a.secretResourceVersion]).sort());
  };
  const truthVersions = () =>
    Object.fromEntries(
      APPS.map((a) => [
        a.name,
        envtest.get(a.namespace, a.secret)?.metadata.resourceVersion ?? null,
      ]).sort(),
    );

  // The production backoff applies here: a second bad line before a watch ended normally backs
  // off (0.8 s, doubling to 30 s, reset after 2 minutes of health). So each bad line is sent to
  // watches that have just ended on their own timeout (--watch-timeout 1), as a rare glitch would be.
  const timeouts = (reflector: string) =>
    sidecar
      .logLines()
      .filter(
        (l) => l.msg === "watch restarted" && l.reason === "timeout" && l.reflector === reflector,
      ).length;

  it("stays up and converges through every garbage kind, lines split and coalesced", async () => {
    await waitUntil(
      async () => ((await get(sidecar.opsPort, "/readyz")).status === 200 ? true : undefined),
      { timeoutMs: 15_000, what: "ready" },
    );
    let step = 0;
    for (const mode of ["split", "coalesce"] as const) {
      envtest.faults.chunking({ mode, seed: 11 + step });
      for (const kind of ["bytes", "truncated", "non-json"] as const) {
        const seen = { registry: timeouts("registry"), secrets: timeouts("secrets/*") };
        await waitUntil(
          () =>
            timeouts("registry") > seen.registry &&
            timeouts("secrets/*") > seen.secrets &&
            envtest.openWatches === 2
              ? true
              : undefined,
          { timeoutMs: 10_000, what: "both watches to turn over on their own" },
        );
        expect(envtest.faults.injectGarbage(kind)).toBe(2);
        const app = APPS[step % APPS.length]!;
        if (step % 4 === 3) envtest.delete(app.namespace, app.secret);
        else
          envtest.apply({
            namespace: app.namespace,
            name: app.secret,
            data: { token: `v${step}` },
          });
        step++;
        await waitUntil(
          async () =>
            JSON.stringify(await secretVersions()) === JSON.stringify(truthVersions())
              ? true
              : undefined,
          { timeoutMs: 10_000, what: `convergence after ${kind} under ${mode}` },
        ).catch(async (e: unknown) => {
          throw new Error(
            `${String(e)}\nserved ${JSON.stringify(await secretVersions())} truth ${JSON.stringify(truthVersions())}\n${sidecar
              .output()
              .split("\n")
              .filter((l) => l.includes('"reflector"') || l.includes("Snapshot"))
              .join("\n")}`,
          );
        });
        expect(sidecar.alive()).toBe(true);
      }
    }
    expect((await get(sidecar.opsPort, "/healthz")).status).toBe(200);
    expect((await get(sidecar.opsPort, "/readyz")).status).toBe(200);
    const logs = sidecar.logLines();
    const decodes = logs.filter((l) => l.msg === "watch restarted" && l.reason === "decode").length;
    expect(decodes).toBe(12);
    expect(logs.filter((l) => l.msg === "backing off")).toEqual([]);
    expect(logs.filter((l) => typeof l.msg === "string" && /\(bug\)/.test(l.msg))).toEqual([]);
  }, 120_000);
});
