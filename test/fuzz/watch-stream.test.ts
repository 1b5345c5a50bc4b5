// Watch streams with garbage in them: random bytes, truncated lines and plain text injected into
// open watches (envtest faults.injectGarbage), with lines split across writes or coalesced into
// one (faults.chunking), mixed with drops, clean ends and real changes. The reflector recovers
// by resuming or relisting, and the mirror converges to what the API server holds
// (watch-stream-process.test.ts feeds the same faults to a `serve` process).

import type { Envtest } from "@replica-mirror/envtest";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReflectorStatus } from "../../src/kube/cache/reflector-status.ts";
import { decodeWatchLine } from "../../src/kube/codec/wire.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { size, waitUntil } from "../support/wait.ts";
import { envtestFor } from "../support/world.ts";
import { APPS, action, perform, served, truth, writeApps } from "./watch-world.ts";

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
      flags: ["--serve-credentials", "true"],
      observer: { reflector: (_name, status) => statuses.push(status) },
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
