// Each App's certificate from its TLS Secret into a real proxy, by SNI (ADR 56): the sidecar
// against envtest with --serve-certificates true keeps HAProxy's, nginx's and Caddy's
// certificates; a client's handshake shows which one each SNI name gets, through renewals,
// refusals, a restarted sidecar, a removed App and a restarted proxy.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { startEchoUpstream } from "../support/echo-upstream.ts";
import { PUSHED_WITHIN_MS } from "../support/margins.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import {
  askOverTls,
  identityOf,
  type ServedIdentity,
  servedIdentity,
} from "../support/tls-client.ts";
import { findTool, type Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { APP_NS, type AppInput, envtestFor, writeRegistry, writeSecret } from "../support/world.ts";
import {
  startZeroHopCaddy,
  startZeroHopHaproxy,
  startZeroHopNginx,
  type ZeroHopProxy,
} from "../support/zero-hop-proxies.ts";

interface PlaneSpec {
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopProxy>;
}

const SPECS: readonly PlaneSpec[] = [
  {
    name: "HAProxy",
    binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
    start: startZeroHopHaproxy,
  },
  {
    name: "nginx",
    binary: findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]),
    start: startZeroHopNginx,
  },
  {
    name: "Caddy",
    binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
    start: startZeroHopCaddy,
  },
];

const SHOP = ["shop.example.com", "*.shop.example.com"];

for (const spec of SPECS) {
  const binary = spec.binary.path;
  const title = `${spec.name} serves each App's certificate by SNI, kept by the sidecar`;
  if (binary === undefined) {
    describe(title, () => {
      // Skipped only where the proxy is not installed; .ci/run installs it, so CI runs it.
      it.skip(`runs the certificate cases (${spec.binary.missing})`, () => {});
    });
    continue;
  }

  describe(title, () => {
    let dir: string;
    let envtest: Envtest;
    let proxy: ZeroHopProxy;
    let sidecar: TestSidecar;
    let upstream: Awaited<ReturnType<typeof startEchoUpstream>>;
    let apps: AppInput[];
    const certs: Record<string, TestCertificate> = {};
    const tlsPort = () => {
      if (proxy.tlsPort === null) throw new Error(`${spec.name}'s launch terminates no TLS`);
      return proxy.tlsPort;
    };
    const served = (sni: string | null) => servedIdentity(tlsPort(), sni);
    const writeTls = (name: string, data: Record<string, string>) =>
      writeSecret(envtest, APP_NS, name, data);
    /**
     * Waits until the proxy answers from the sidecar's newest Snapshot: Caddy resets the
     * connections it has queued while it loads a change, which a handshake must not race.
     */
    const settled = () =>
      waitUntil(
        async () => {
          const r = await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/snapshot`);
          const s = (await r.json()) as {
            revision: number;
            proxies: { revision: number | null }[];
          };
          return s.proxies.every((p) => p.revision === s.revision);
        },
        { timeoutMs: 5_000, intervalMs: 10, what: "the proxy to hold the newest Snapshot" },
      );
    /** The sidecar, with a state file (README, "The state file") in `dir`. */
    const startSidecar = () =>
      startTestSidecar(envtest, {
        flags: [
          "--serve-certificates",
          "true",
          "--allow-local-upstreams",
          "true",
          "--state-file",
          join(dir, "state"),
          "--state-key-file",
          join(dir, "state-key"),
          ...proxy.sidecarFlags,
        ],
      });
    /** Waits until `sni` gets `want`; resolves with the milliseconds it took. */
    async function untilServed(sni: string, want: ServedIdentity): Promise<number> {
      const started = performance.now();
      await waitUntil(async () => (await served(sni)).serial === want.serial, {
        timeoutMs: 5_000,
        intervalMs: 10,
        what: `${sni} to be served ${want.serial}`,
      });
      return performance.now() - started;
    }

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "replica-mirror-certificates-"));
      certs.shop = makeCertificate({ names: SHOP });
      certs.shopRenewed = makeCertificate({ names: SHOP });
      certs.edge = makeCertificate({ names: ["*.edge.example.com"] });
      certs.other = makeCertificate({ names: ["other.example.com"] });
      certs.expired = makeCertificate({
        names: SHOP,
        notBefore: new Date(Date.now() - 60 * 86_400_000),
        notAfter: new Date(Date.now() - 86_400_000),
      });
      upstream = await startEchoUpstream();
      envtest = await envtestFor();
      proxy = await spec.start(binary, dir);
      apps = [
        {
          name: "shop",
          hostnames: SHOP,
          namespace: APP_NS,
          upstream: upstream.url,
          tls: "shop-tls",
        },
        {
          name: "edge",
          hostnames: ["*.edge.example.com"],
          namespace: APP_NS,
          upstream: upstream.url,
          tls: "edge-tls",
        },
        {
          name: "plain",
          hostnames: ["plain.example.com"],
          namespace: APP_NS,
          upstream: upstream.url,
        },
      ];
      for (const app of apps)
        writeSecret(envtest, APP_NS, `${app.name}-credentials`, { token: "t" });
      writeTls("shop-tls", tlsSecretData(certs.shop!));
      writeTls("edge-tls", tlsSecretData(certs.edge!));
      writeRegistry(envtest, apps);
      await writeFile(join(dir, "state-key"), randomBytes(32));
      sidecar = await startSidecar();
      await untilServed("shop.example.com", identityOf(certs.shop!.crt));
    }, 60_000);

    afterAll(async () => {
      await sidecar?.stop();
      await proxy?.stop();
      await envtest?.close();
      await upstream?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("selects each App's certificate by SNI, exact and wildcard, and the default for the rest", async () => {
      await settled();
      const names = ["shop.example.com", "a.shop.example.com", "x.edge.example.com"];
      const got = await Promise.all(
        [...names, "unknown.example.org", "plain.example.com"].map(served),
      );
      const [shop, shopWild, edge, unknown, plain] = got;
      expect([shop, shopWild, edge]).toEqual([
        identityOf(certs.shop!.crt),
        identityOf(certs.shop!.crt),
        identityOf(certs.edge!.crt),
      ]);
      // Both without an App certificate: the proxy's default one, no App's.
      expect(plain).toEqual(unknown);
      expect([shop, edge].map((i) => i!.serial)).not.toContain(unknown!.serial);
    });

    it("routes a request over TLS as over plain HTTP", async () => {
      await settled();
      const answer = await askOverTls(tlsPort(), "shop.example.com", "shop.example.com", "/x");
      // The world's echo upstream names the App that reached it.
      expect(answer).toMatchObject({ status: 200, echoed: { app: "shop", path: "/x" } });
    });

    it("shows each App's served certificate in the status API, never its key", async () => {
      const body = await (await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/apps/shop`)).text();
      const record = JSON.parse(body) as { tls: { state: string; served: { serial: string } } };
      expect({ state: record.tls.state, serial: record.tls.served.serial }).toEqual({
        state: "served",
        serial: identityOf(certs.shop!.crt).serial,
      });
      expect(body).not.toContain("PRIVATE KEY");
    });

    it("serves a renewal on the next handshake, and keeps it through a mismatched and an expired pair", async () => {
      writeTls("shop-tls", tlsSecretData(certs.shopRenewed!));
      const tookMs = await untilServed("shop.example.com", identityOf(certs.shopRenewed!.crt));
      expect(tookMs).toBeLessThan(PUSHED_WITHIN_MS);
      writeTls("shop-tls", { "tls.crt": certs.shop!.crt, "tls.key": certs.other!.key });
      await waitUntil(
        async () => {
          const r = await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/apps/shop`);
          return ((await r.json()) as { tls: { state: string } }).tls.state === "refused";
        },
        { timeoutMs: 5_000, what: "the mismatched pair refused" },
      );
      await settled();
      expect(await served("a.shop.example.com")).toEqual(identityOf(certs.shopRenewed!.crt));
      writeTls("shop-tls", tlsSecretData(certs.expired!));
      await waitUntil(
        async () => {
          const r = await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/apps/shop`);
          const { tls } = (await r.json()) as { tls: { rule: string | null } };
          return tls.rule === "the certificate has expired";
        },
        { timeoutMs: 5_000, what: "the expired certificate refused" },
      );
      await settled();
      expect(await served("shop.example.com")).toEqual(identityOf(certs.shopRenewed!.crt));
      expect(sidecar.lines().join("\n")).not.toContain(certs.other!.key.split("\n")[1]!);
    });

    // After the test before: the Secret holds an expired certificate, the renewal is the last good.
    it("keeps the last good one through a restart of the sidecar, from its state file (ADR 92)", async () => {
      await settled();
      await sidecar.stop();
      sidecar = await startSidecar();
      await sidecar.serving(1);
      await settled();
      const r = await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/apps/shop`);
      const { tls } = (await r.json()) as { tls: { rule: string | null } };
      expect([tls.rule, await served("shop.example.com")]).toEqual([
        "the certificate has expired",
        identityOf(certs.shopRenewed!.crt),
      ]);
    });

    it("drops a removed App's certificate", async () => {
      await settled();
      const unknown = await served("unknown.example.org");
      writeRegistry(
        envtest,
        apps.filter((a) => a.name !== "edge"),
      );
      await untilServed("x.edge.example.com", unknown);
    });

    it("gets its certificates back at the next revision check after a restart", async () => {
      await proxy.restart();
      const restarted = performance.now();
      await untilServed("shop.example.com", identityOf(certs.shopRenewed!.crt));
      expect(performance.now() - restarted).toBeLessThan(PUSHED_WITHIN_MS);
    });
  });
}
