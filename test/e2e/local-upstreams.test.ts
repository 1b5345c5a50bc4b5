// A tenant's Registry entry cannot steer a real proxy at the pod's own control plane (ADR 48):
// Apps routed to the sidecar's ops port, a proxy's push channel or the cloud's metadata address,
// in every spelling a URL parser reads as one, are refused, so nginx, Caddy and HAProxy answer
// their hosts 404 unknown-host in hop mode and in zero-hop mode, never with what listens there.
// An App on a private address is still admitted; with --allow-local-upstreams true a local
// upstream routes. One sidecar per mode; each proxy started once per mode.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientAnswer,
  type DataPlaneProcess,
  findPlane,
  freePort,
  type PlaneKind,
  through,
} from "../support/data-plane.ts";
import { getJson } from "../support/http.ts";
import { shippedPlane } from "../support/plane-in-front.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { APP_NS, type AppInput, envtestFor, writeRegistry, writeSecret } from "../support/world.ts";
import {
  ask,
  CADDY_ANSWERS,
  type EchoUpstreams,
  NGINX_ANSWERS,
  type RefusedAnswers,
  startEchoUpstreams,
  TEXT_ANSWERS,
  type ZeroHopAnswer,
} from "../support/zero-hop.ts";
import {
  caddyLaunch,
  haproxyLaunch,
  nginxLaunch,
  type ProxyLaunch,
  startZeroHop,
  type ZeroHopProxy,
} from "../support/zero-hop-proxies.ts";
import { mappedAnswers } from "./contract.ts";

const KINDS: readonly PlaneKind[] = ["nginx", "caddy", "haproxy"];
const installed = KINDS.filter((k) => findPlane(k).path !== undefined);
// The ops listener's 403 to a request that carries x-mirror-app, which each data plane passes on.
const ROUTED = "the status API does not answer a request a data plane routed (x-mirror-app)";

const missing = KINDS.filter((k) => !installed.includes(k)).map((k) => findPlane(k).missing);

/** What each hop configuration shows the client for unknown-host. */
const HOP_UNKNOWN: Record<PlaneKind, ClientAnswer> = {
  nginx: mappedAnswers("\n", 500).unknownHost,
  haproxy: mappedAnswers("", 502).unknownHost,
  caddy: { status: 404, reason: "unknown-host", retryAfter: null, body: "" },
};
const ZERO_HOP: Record<PlaneKind, RefusedAnswers> = {
  nginx: NGINX_ANSWERS,
  haproxy: TEXT_ANSWERS,
  caddy: CADDY_ANSWERS,
};
const LAUNCHES = { nginx: nginxLaunch, caddy: caddyLaunch, haproxy: haproxyLaunch } as const;

/** The sidecar's ops listener, on one port for every sidecar of this file: the tenants name it. */
let opsPort: number;
/** The hop-mode sidecar's data listener, the same for the sidecar that replaces it. */
let dataPort: number;
let envtest: Envtest;
let echo: EchoUpstreams;
let dir: string;
const launches = new Map<PlaneKind, ProxyLaunch>();

/** The tenants' Apps, by host: each upstream a local address but the last two. */
function apps(): AppInput[] {
  const local: [string, string][] = [
    ["ops", `http://127.0.0.1:${opsPort}`],
    ["named", `http://localhost:${opsPort}`],
    ["any", `http://0.0.0.0:${opsPort}`],
    ["metadata", "http://169.254.169.254"],
    ["short", `http://127.1:${opsPort}`],
    ["decimal", `http://2130706433:${opsPort}`],
    ["mapped", `http://[::ffff:127.0.0.1]:${opsPort}`],
    ["echo", echo.urls[0]!],
  ];
  for (const kind of ["caddy", "nginx"] as const) {
    const flags = launches.get(kind)?.sidecarFlags;
    if (flags !== undefined) local.push([`${kind}-push`, flags[1]!]);
  }
  return [
    ...local.map(([name, upstream]) => ({ name, hostnames: [host(name)], upstream })),
    { name: "private", hostnames: [host("private")], upstream: "http://10.0.0.12:8080" },
  ].map((a) => ({ ...a, namespace: APP_NS }));
}
const host = (name: string) => `${name}.example.com`;
/** The hosts of the Apps a sidecar refuses by default. */
const refusedHosts = () =>
  apps()
    .filter((a) => a.name !== "private")
    .map((a) => a.hostnames[0]!);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-local-upstreams-"));
  [opsPort, dataPort] = [await freePort(), await freePort()];
  echo = await startEchoUpstreams(1);
  for (const kind of installed) {
    const scratch = await mkdtemp(join(dir, `${kind}-`));
    launches.set(kind, await LAUNCHES[kind](findPlane(kind).path!, scratch));
  }
  envtest = await envtestFor();
  for (const a of apps()) writeSecret(envtest, APP_NS, `${a.name}-credentials`, { token: "t" });
  writeRegistry(envtest, apps());
}, 30_000);

afterAll(async () => {
  await envtest?.close();
  await echo?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A sidecar of this file: its ops listener on `opsPort`, refusing local upstreams unless told. */
async function sidecar(flags: readonly string[], allowLocal = false): Promise<TestSidecar> {
  const s = await startTestSidecar(envtest, {
    flags: [
      "--ops-listen",
      `127.0.0.1:${opsPort}`,
      "--allow-local-upstreams",
      String(allowLocal),
      ...flags,
    ],
  });
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok, {
    what: "the sidecar to be ready",
  });
  return s;
}

/** What the ops API says of the Registry: the Apps refused, and whether `private` is served. */
async function admitted(): Promise<{ refused: (string | null)[]; private: unknown }> {
  const snapshot = await getJson<{ registry: { refusedApps: { name: string | null }[] } }>(
    opsPort,
    "/v1/snapshot",
  );
  const hosted = await getJson<{ app?: string }>(opsPort, `/v1/hosts/${host("private")}`);
  return { refused: snapshot.registry.refusedApps.map((r) => r.name), private: hosted.app };
}

const refusedNames = () =>
  apps()
    .filter((a) => a.name !== "private")
    .map((a) => a.name);

describe.skipIf(installed.length === 0)(
  `hop mode: the shipped configurations in front of one sidecar ${missing.join("; ")}`,
  () => {
    let current: TestSidecar | undefined;
    const planes = new Map<PlaneKind, { port: number; plane: DataPlaneProcess }>();

    beforeAll(async () => {
      current = await sidecar(["--listen", `127.0.0.1:${dataPort}`]);
      for (const kind of installed) {
        const port = await freePort();
        const scratch = await mkdtemp(join(dir, `hop-${kind}-`));
        const binary = findPlane(kind).path!;
        const plane = await shippedPlane(kind).start(binary, {
          port,
          dir: scratch,
          sidecarPort: dataPort,
        });
        planes.set(kind, { port, plane });
      }
    }, 60_000);

    afterAll(async () => {
      for (const { plane } of planes.values()) await plane.stop();
      await current?.stop();
    });

    it("refuses every local upstream and admits the private one", async () => {
      expect(await admitted()).toEqual({ refused: refusedNames(), private: "private" });
    });

    it("answers unknown-host for each refused App's host, never what listens at its upstream", async () => {
      const got: [PlaneKind, string, ClientAnswer][] = [];
      const want: [PlaneKind, string, ClientAnswer][] = [];
      for (const [kind, { port }] of planes)
        for (const h of refusedHosts()) {
          got.push([kind, h, await through(port, { host: h, path: "/v1/snapshot" })]);
          want.push([kind, h, HOP_UNKNOWN[kind]]);
        }
      expect(got).toEqual(want);
    });

    describe("with --allow-local-upstreams true", () => {
      beforeAll(async () => {
        await current?.stop();
        current = await sidecar(["--listen", `127.0.0.1:${dataPort}`], true);
      }, 30_000);

      it("routes a local upstream; the status API still refuses what a data plane routed", async () => {
        const got: [PlaneKind, number, string | null, number, string][] = [];
        for (const [kind, { port }] of planes) {
          const routed = await through(port, { host: host("echo"), path: "/x" });
          const ops = await through(port, { host: host("ops"), path: "/v1/snapshot" });
          const echoed = JSON.parse(routed.body) as { path?: string };
          got.push([kind, routed.status, echoed.path ?? null, ops.status, ops.body]);
        }
        expect(got).toEqual([...planes.keys()].map((kind) => [kind, 200, "/x", 403, ROUTED]));
      });
    });
  },
);

describe.skipIf(installed.length === 0)(
  `zero-hop mode: one sidecar keeping every proxy's table ${missing.join("; ")}`,
  () => {
    let current: TestSidecar | undefined;
    const proxies = new Map<PlaneKind, ZeroHopProxy>();

    beforeAll(async () => {
      for (const [kind, launch] of launches) proxies.set(kind, await startZeroHop(launch));
      current = await sidecar([...launches.values()].flatMap((l) => l.sidecarFlags));
      for (const [kind, proxy] of proxies)
        await waitUntil(
          async () => (await ask(proxy.port, { host: "nope.example.com" })).status === 404,
          {
            what: `${kind} to hold the sidecar's table`,
          },
        );
    }, 60_000);

    afterAll(async () => {
      await current?.stop();
      for (const proxy of proxies.values()) await proxy.stop();
    });

    it("refuses every local upstream, the push channels' among them, and admits the private one", async () => {
      expect(await admitted()).toEqual({ refused: refusedNames(), private: "private" });
    });

    it("answers unknown-host for each refused App's host, never what listens at its upstream", async () => {
      const got: [PlaneKind, string, ZeroHopAnswer][] = [];
      const want: [PlaneKind, string, ZeroHopAnswer][] = [];
      for (const [kind, proxy] of proxies)
        for (const h of refusedHosts()) {
          got.push([kind, h, await ask(proxy.port, { host: h, path: "/v1/snapshot" })]);
          want.push([kind, h, ZERO_HOP[kind].unknownHost]);
        }
      expect(got).toEqual(want);
    });
  },
);
