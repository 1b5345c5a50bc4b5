// Each App's certificate served by SNI through the real HAProxy and its runtime API (ADR 56):
// the shipped zero-hop haproxy.cfg, its crt-list and a default certificate made with openssl.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { crtListLines } from "../../src/push/haproxy-certificates.ts";
import { runtimeCommand } from "../../src/push/haproxy-runtime.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { type Pusher, startPusher } from "../../src/push/pusher.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate } from "../support/certificates.ts";
import { PUSHED_WITHIN_MS } from "../support/margins.ts";
import { release } from "../support/release.ts";
import { askOverTls, fingerprintOf, servedFingerprint } from "../support/tls-client.ts";
import { findTool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import type { AppInput } from "../support/world.ts";
import { ask, type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import {
  type Certificates,
  rotated,
  servedSnapshot,
  startRuntimeRelay,
  tlsApp,
} from "./haproxy-certificates-world.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);
const ROTATIONS = 50;

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)("HAProxy certificates by SNI", () => {
  let dir: string;
  let proxy: ZeroHopProxy;
  let upstreams: EchoUpstreams;
  let apps: AppInput[];
  let a: TestCertificate;
  let b: TestCertificate;
  let renewed: TestCertificate[];
  let defaultCertificate: string;
  const failures: string[] = [];
  const tlsPort = () => proxy.tlsPort!;
  /** Pushes `view` with the launch's target; its failure's message is kept for the key check. */
  const push = async (view: Snapshot) => {
    const pushed = await proxy.target.push(view);
    if (!pushed.ok) failures.push(pushed.error.message);
    return pushed;
  };
  const certificates = (bCert = b, version = "1"): Certificates => ({
    a: { cert: a, version: "1" },
    b: { cert: bCert, version },
  });

  beforeAll(async () => {
    a = makeCertificate({ names: ["a.example.com", "*.a.example.com"] });
    b = makeCertificate({ names: ["b.example.com"] });
    renewed = Array.from({ length: ROTATIONS }, () =>
      makeCertificate({ names: ["b.example.com"] }),
    );
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-haproxy-tls-"));
    upstreams = await startEchoUpstreams(1);
    const url = upstreams.urls[0]!;
    apps = [
      tlsApp("a", ["a.example.com", "*.a.example.com"], url),
      tlsApp("b", ["b.example.com"], url),
      { name: "c", hostnames: ["c.example.com"], upstream: url },
    ];
    proxy = await startZeroHopHaproxy(haproxy.path!, dir);
    defaultCertificate = await servedFingerprint(tlsPort(), null);
  }, 60_000);

  afterAll(() => release(proxy, upstreams, dir));

  it("serves each App's certificate for its exact and wildcard names, the default one otherwise", async () => {
    const view = servedSnapshot(apps, certificates(), 1);
    expect(await push(view)).toEqual({ ok: true, value: undefined });
    const names = [
      "a.example.com",
      "x.a.example.com",
      "y.x.a.example.com",
      "b.example.com",
      "c.example.com",
      "nope.example.com",
    ];
    const served = await Promise.all(names.map((n) => servedFingerprint(tlsPort(), n)));
    expect(Object.fromEntries(names.map((n, i) => [n, served[i]]))).toEqual({
      "a.example.com": fingerprintOf(a.crt),
      "x.a.example.com": fingerprintOf(a.crt),
      // HAProxy's `*.suffix` filter covers one label, as the certificate's wildcard does.
      "y.x.a.example.com": defaultCertificate,
      "b.example.com": fingerprintOf(b.crt),
      "c.example.com": defaultCertificate,
      "nope.example.com": defaultCertificate,
    });
    expect(defaultCertificate).not.toBe(fingerprintOf(a.crt));
    expect(await proxy.target.heldDigest()).toEqual({
      ok: true,
      value: proxy.target.digestOf(view),
    });
  });

  it("answers a request over TLS as over plain HTTP", async () => {
    const view = servedSnapshot(apps, certificates(), 2);
    await push(view);
    const hosts = ["a.example.com", "x.a.example.com", "c.example.com", "nope.example.com"];
    const plain = await Promise.all(hosts.map((host) => ask(proxy.port, { host })));
    const overTls = await Promise.all(hosts.map((host) => askOverTls(tlsPort(), host, host)));
    expect(overTls).toEqual(plain);
    expect(plain.map((p) => p.echoed?.mirror["x-mirror-app"] ?? p.reason)).toEqual([
      "a",
      "a",
      "c",
      "unknown-host",
    ]);
  });

  it("sends a rotated certificate alone and serves it on the next handshake; a removed App's is gone", async () => {
    const target = haproxyTarget({
      socket: join(dir, "push", "relay.sock"),
      map: join(dir, "replica-mirror.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
      crtList: join(dir, "replica-mirror.crt-list"),
    });
    const relay = await startRuntimeRelay(join(dir, "push", "relay.sock"), proxy.socket);
    try {
      const first = servedSnapshot(apps, certificates(), 3);
      await target.push(first);
      const next = rotated(first, apps, certificates(renewed[0]!, "2"), "b");
      relay.commands.length = 0;
      expect(await target.push(next)).toEqual({ ok: true, value: undefined });
      const [oldName, newName] = [first, next].map(
        (v) => crtListLines(join(dir, "replica-mirror.crt-list"))(v)[1]!.name,
      );
      const crtList = join(dir, "replica-mirror.crt-list");
      expect(relay.commands).toEqual([
        `set map ${join(dir, "replica-mirror-overlay.map")} REVISION 4`,
        `new ssl cert ${newName};set ssl cert ${newName}`,
        `commit ssl cert ${newName};add ssl crt-list ${crtList}`,
        `del ssl crt-list ${crtList} ${oldName}`,
        `del ssl cert ${oldName}`,
      ]);
      expect(await servedFingerprint(tlsPort(), "b.example.com")).toBe(
        fingerprintOf(renewed[0]!.crt),
      );
      // A whole push (after a failure, say) reads what HAProxy holds and sets nothing it holds.
      relay.commands.length = 0;
      expect(await target.push(next, { whole: true })).toEqual({ ok: true, value: undefined });
      expect(
        relay.commands.filter((c) => /ssl cert|ssl crt-list/.test(c) && !c.startsWith("show")),
      ).toEqual([]);
      const without = servedSnapshot(apps.slice(0, 1), { a: { cert: a, version: "1" } }, 5);
      expect(await target.push(without)).toEqual({ ok: true, value: undefined });
      const store = await runtimeCommand(proxy.socket, "show ssl cert", 2_000);
      expect({
        served: await servedFingerprint(tlsPort(), "b.example.com"),
        held:
          store.ok && store.value.split("\n").filter((l) => l.includes("/replica-mirror/")).length,
      }).toEqual({ served: defaultCertificate, held: 1 });
    } finally {
      await relay.close();
    }
  });

  it("fails a push whose set lands in another open transaction, aborts it, and pushes next time", async () => {
    const view = servedSnapshot(apps, certificates(), 6);
    // Another target pushed last: what this one remembers is stale.
    await proxy.target.push(view, { whole: true });
    const foreign = join(dir, "foreign.pem");
    await runtimeCommand(proxy.socket, `new ssl cert ${foreign}`, 2_000);
    await runtimeCommand(proxy.socket, `set ssl cert ${foreign} <<\n${a.crt}${a.key}\n`, 2_000);
    const next = rotated(view, apps, certificates(renewed[1]!, "3"), "b");
    const failed = await push(next);
    expect(failed).toEqual({
      ok: false,
      error: {
        reason: "rejected",
        message: expect.stringContaining(
          `the payload went to the open transaction of ${foreign}, aborted`,
        ),
      },
    });
    expect(await push(next)).toEqual({ ok: true, value: undefined });
    expect(await servedFingerprint(tlsPort(), "b.example.com")).toBe(
      fingerprintOf(renewed[1]!.crt),
    );
  });

  describe("through the pusher", () => {
    let pusher: Pusher;
    const drifts: number[] = [];
    let view: Snapshot;

    beforeAll(async () => {
      pusher = startPusher({
        target: proxy.target,
        clock: systemClock,
        observer: { ...silentPushObserver, drifted: (e) => drifts.push(e.revision) },
        verifyIntervalMs: 300,
      });
      view = servedSnapshot(apps, certificates(renewed[2]!, "4"), 10);
      pusher.publish(view);
      await waitUntil(() => pusher.held() === 10, { what: "the pusher to push revision 10" });
    });

    afterAll(() => release(pusher));

    it("gives a restarted HAProxy its certificates back at once", async () => {
      await proxy.restart();
      const restarted = performance.now();
      // Certificates are added one after another: wait for every one of them.
      await waitUntil(
        async () =>
          (await servedFingerprint(tlsPort(), "x.a.example.com")) === fingerprintOf(a.crt) &&
          (await servedFingerprint(tlsPort(), "b.example.com")) === fingerprintOf(renewed[2]!.crt),
        {
          timeoutMs: 5_000,
          intervalMs: 10,
          what: "the restarted HAProxy to serve a's and b's certificates",
        },
      );
      expect(performance.now() - restarted).toBeLessThan(PUSHED_WITHIN_MS);
    });

    it("notices a certificate replaced or a line deleted behind its back and serves the pushed one again", async () => {
      const name = crtListLines(join(dir, "replica-mirror.crt-list"))(view)[0]!.name;
      for (const tamper of [
        [`set ssl cert ${name} <<\n${b.crt}${b.key}\n`, `commit ssl cert ${name}`],
        [`del ssl crt-list ${join(dir, "replica-mirror.crt-list")} ${name}`],
      ]) {
        drifts.length = 0;
        for (const command of tamper) await runtimeCommand(proxy.socket, command, 2_000);
        expect(await servedFingerprint(tlsPort(), "a.example.com")).not.toBe(fingerprintOf(a.crt));
        await waitUntil(
          async () =>
            (await servedFingerprint(tlsPort(), "a.example.com")) === fingerprintOf(a.crt),
          {
            timeoutMs: 5_000,
            intervalMs: 20,
            what: "HAProxy to serve a's certificate again",
          },
        );
        expect(drifts).toEqual([10]);
      }
    });
  });

  it(`fails no handshake during ${ROTATIONS} rotations under a loop of handshakes`, async () => {
    let view = servedSnapshot(apps, certificates(renewed[0]!, "10"), 20);
    await push(view);
    const served = new Set(renewed.map((r) => fingerprintOf(r.crt)));
    const seen = { handshakes: 0, failed: 0, other: 0 };
    let rotating = true;
    const loop = async () => {
      while (rotating) {
        try {
          const got = await servedFingerprint(tlsPort(), "b.example.com");
          seen.handshakes++;
          if (!served.has(got)) seen.other++;
        } catch {
          seen.failed++;
        }
      }
    };
    const loops = [loop(), loop()];
    for (let i = 1; i < ROTATIONS; i++) {
      view = rotated(view, apps, certificates(renewed[i]!, `${10 + i}`), "b");
      expect(await push(view)).toEqual({ ok: true, value: undefined });
      await new Promise((r) => setTimeout(r, 5));
    }
    rotating = false;
    await Promise.all(loops);
    expect({ failed: seen.failed, other: seen.other, some: seen.handshakes > ROTATIONS }).toEqual({
      failed: 0,
      other: 0,
      some: true,
    });
    expect(await servedFingerprint(tlsPort(), "b.example.com")).toBe(
      fingerprintOf(renewed[ROTATIONS - 1]!.crt),
    );
  });

  it("shows no private key in HAProxy's log or in any error a push returned", () => {
    const keys = [a, b, ...renewed].flatMap((c) =>
      c.key.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----")),
    );
    const seen = `${proxy.log()}\n${failures.join("\n")}`;
    expect({
      failures: failures.length > 0,
      keys: keys.filter((k) => seen.includes(k)),
      marker: seen.includes("PRIVATE KEY"),
    }).toEqual({ failures: true, keys: [], marker: false });
  });
});
