// nginx's certificates when something goes wrong (ADR 56): a pair whose key is not the
// certificate's keeps the default certificate and is logged by App and id; a restarted nginx gets
// its certificates back within one push and one changed behind the pusher's back is put back,
// both through the pusher; and no private key shows in nginx's log or an error the target returns.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { adminCall } from "../../src/push/admin-http.ts";
import { nginxTableBody } from "../../src/push/nginx-table.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { startPusher } from "../../src/push/pusher.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { PUSHED_WITHIN_MS } from "../support/margins.ts";
import { findTool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import {
  A_NAMES,
  type CertificateWorld,
  startCertificateWorld,
} from "./nginx-certificates-world.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

/** A PEM as a `k` line's field. */
const field = (pem: string) => pem.trimEnd().replaceAll("\n", "|");

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("nginx's certificates when something goes wrong", () => {
  let w: CertificateWorld;
  let held: Snapshot;
  /** A whole table written through nginx's socket by another client than the target. */
  const forge = (body: string) =>
    adminCall(w.proxy.socket, 5_000, {
      method: "PUT",
      path: "/replica-mirror/table",
      host: "nginx",
      body,
    });

  beforeAll(async () => {
    w = await startCertificateWorld(nginx.path!);
    w.named("forged", A_NAMES);
    w.named("mismatched", A_NAMES);
    held = w.build();
    await w.pushed(held);
  }, 30_000);

  afterAll(() => w?.close());

  it("keeps the default certificate for a pair whose key is not the certificate's, logging the App and id", async () => {
    // a's line with b's key, once under a new id and once under the id of a's own certificate,
    // which nginx parsed already: neither stands for a's (the sidecar would refuse both).
    await w.served(["a.example.com"]);
    const bKey = field(w.certs.get("b1")!.key);
    const aId = /^k a ([0-9a-f]{16});/m.exec(nginxTableBody(held))![1]!;
    const steps: { got: string[]; logged: boolean }[] = [];
    for (const [id, head] of [
      ["00000000000000aa", `k a 00000000000000aa;${field(w.certs.get("mismatched")!.crt)};`],
      [aId, ""],
    ]) {
      const body = nginxTableBody(held).replace(
        /^(k a [0-9a-f]{16};[^;]*;).*$/m,
        (_, own: string) => `${head || own}${bKey}`,
      );
      expect((await forge(body)).ok).toBe(true);
      steps.push({
        got: await w.served(["a.example.com", "b.example.com"]),
        logged: w.proxy.log().includes(`certificate ${id} of App a is not served`),
      });
    }
    await w.pushed(held, { whole: true });
    expect({ steps, restored: await w.served(["a.example.com"]) }).toEqual({
      steps: [
        { got: ["default", "b1"], logged: true },
        { got: ["default", "b1"], logged: true },
      ],
      restored: ["a1"],
    });
  });

  it("gives a restarted nginx its certificates back within one push, and puts back one changed behind the pusher's back", async () => {
    const drifts: number[] = [];
    const observer = {
      ...silentPushObserver,
      failed: (e: { message: string }) => w.errors.push(e.message),
      drifted: (e: { revision: number }) => drifts.push(e.revision),
    };
    const pusher = startPusher({
      target: w.target,
      clock: systemClock,
      observer,
      verifyIntervalMs: 200,
    });
    const servesA1 = async () => (await w.served(["a.example.com"]))[0] === "a1";
    try {
      pusher.publish(held);
      await waitUntil(() => pusher.held() === held.revision, { timeoutMs: 5_000 });
      await w.proxy.restart();
      const restarted = performance.now();
      await waitUntil(servesA1, { timeoutMs: 2_000 });
      const backInMs = performance.now() - restarted;
      console.log(`nginx: certificates back ${Math.round(backInMs)} ms after a restart`);
      // The same revision with another certificate for a.
      w.tlsOf.set("a", { cert: "forged", version: 1_000 });
      const forged = w.build({ revision: held.revision });
      expect((await forge(nginxTableBody(forged))).ok).toBe(true);
      const whileForged = await w.served(["a.example.com"]);
      await waitUntil(servesA1, { timeoutMs: 3_000 });
      expect({ within: backInMs < PUSHED_WITHIN_MS, whileForged, drifts }).toEqual({
        within: true,
        whileForged: ["forged"],
        drifts: [held.revision],
      });
    } finally {
      await pusher.close();
    }
  }, 15_000);

  it("shows no private key in nginx's log or in an error the target returns", async () => {
    const down = nginxTarget({ socket: join(w.dir, "nothing.sock") });
    const failed = await down.push(held);
    if (!failed.ok) w.errors.push(failed.error.message);
    const keyLines = [...w.certs.values()].flatMap((c) =>
      c.key.split("\n").filter((l) => /^[A-Za-z0-9+/=]{16,}$/.test(l)),
    );
    const text = `${w.proxy.log()}\n${w.errors.join("\n")}`;
    expect({
      logged: text.includes("is not served"),
      errors: w.errors.length > 0,
      keyLinesFound: keyLines.filter((l) => text.includes(l)).length,
    }).toEqual({ logged: true, errors: true, keyLinesFound: 0 });
  });
});
