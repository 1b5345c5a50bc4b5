// The routing contract through real HAProxy and Caddy in zero-hop mode: the sidecar keeps each
// proxy's table through its runtime interface, and the proxy answers from it (README, "Zero-hop
// mode"); then the credential cases of hop mode (ADR 53) through the same proxies, each with a
// sidecar of its own serving credentials. nginx's Lua variant runs in test/push (it needs
// libnginx-mod-http-lua).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { through, throughWithHeaders } from "../support/data-plane.ts";
import { HOSTS, type RoutingWorld, startRoutingWorld } from "../support/routing-world.ts";
import { findTool, type Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { CADDY_ANSWERS, type RefusedAnswers, TEXT_ANSWERS } from "../support/zero-hop.ts";
import {
  startZeroHopCaddy,
  startZeroHopHaproxy,
  type ZeroHopProxy,
} from "../support/zero-hop-proxies.ts";
import { credentialCases } from "./contract-credentials.ts";
import type { MirrorHeader } from "./contract-trust.ts";
import { describeZeroHopDataPlane } from "./contract-zero-hop.ts";

const plain = ({ status, reason, retryAfter, body }: RefusedAnswers["notSynced"]) => ({
  status,
  reason,
  retryAfter,
  body,
});
const answersOf = (a: RefusedAnswers) => ({
  secretUnavailable: plain(a.secretUnavailable),
  notSynced: plain(a.notSynced),
  unknownHost: plain(a.unknownHost),
  badHost: plain(a.badHost),
});

interface ZeroHopSpec {
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopProxy>;
  readonly answers: RefusedAnswers;
  readonly upstreamHeaders: readonly MirrorHeader[];
}

/** Hop mode's credential cases through `spec`'s proxy, its table kept by a sidecar. */
function describeZeroHopCredentials(spec: ZeroHopSpec): void {
  const binary = spec.binary.path;
  describe.skipIf(binary === undefined)(`${spec.name} in zero-hop mode: credentials`, () => {
    let dir: string;
    let plane: ZeroHopProxy;
    let world: RoutingWorld;
    const ask = (r: Parameters<typeof through>[1]) => through(plane.port, r);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-e2e-"));
      plane = await spec.start(binary!, dir);
      world = await startRoutingWorld({ sidecarFlags: plane.sidecarFlags });
      await waitUntil(async () => (await ask({ host: HOSTS.credential })).status === 200, {
        timeoutMs: 10_000,
        what: "the first push",
      });
    }, 60_000);

    afterAll(async () => {
      await world?.close();
      await plane?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    credentialCases({
      ask,
      world: () => world,
      answers: { ...answersOf(spec.answers), sidecarDown: plain(spec.answers.notSynced) },
      upstreamHeaders: spec.upstreamHeaders,
      credentialAnswers: {
        secretUnusable: plain(spec.answers.secretUnusable),
        credentialsOff: plain(spec.answers.credentialsOff),
      },
      exchange: (r) => throughWithHeaders(plane.port, r),
    });
  });
}

const SPECS: readonly ZeroHopSpec[] = [
  {
    name: "HAProxy runtime-API map",
    binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
    start: startZeroHopHaproxy,
    answers: TEXT_ANSWERS,
    upstreamHeaders: ["x-mirror-app", "x-mirror-revision"],
  },
  {
    name: "Caddy admin API",
    binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
    start: startZeroHopCaddy,
    answers: CADDY_ANSWERS,
    upstreamHeaders: ["x-mirror-app", "x-mirror-revision", "x-mirror-upstream"],
  },
];

for (const spec of SPECS) {
  describeZeroHopDataPlane({ ...spec, answers: answersOf(spec.answers) });
  describeZeroHopCredentials(spec);
}
