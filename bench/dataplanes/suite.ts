// What a user's data plane pays for the sidecar: each real proxy with its shipped hop
// configuration asking the shipped sidecar (synced against envtest) on every request, and with its
// shipped zero-hop configuration answering from the table its own sidecar pushes, against the same
// proxy routing every host straight to the same upstream, in alternating rounds of one run
// (load-phase.ts), at 10k Apps with credentials on too; then, at 10k Apps, the time from an API
// write to the proxy's new answer (write-phase.ts), and from an App credential's rotation to its
// upstream getting the new value (rotation-phase.ts).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPlane, type PlaneKind } from "../../test/support/data-plane.ts";
import { startLoadGenerator, writeHostsFile } from "../load.ts";
import type { SuiteContext, SuiteOutput } from "../suite.ts";
import { startClusterProcess } from "./cluster-process.ts";
import {
  bytesLabel,
  CREDENTIAL,
  CREDENTIAL_BYTES,
  credentialKey,
  extraKeys,
  VALUE_BYTES,
} from "./credentials.ts";
import type { DataplanesData, RotationData, SizeData, WriteToAnswerData } from "./data.ts";
import { benchLoad, type PhaseOptions } from "./load-phase.ts";
import { ALL_PROXIES, PROXIES, planeVersion } from "./proxies.ts";
import { dataplaneRows } from "./report.ts";
import { benchRotations } from "./rotation-phase.ts";
import { startSeenUpstream } from "./seen-upstream.ts";
import { benchCertificates, benchView, writeTlsSecrets } from "./tls-certificates.ts";
import type { TlsData } from "./tls-data.ts";
import { benchTls } from "./tls-phase.ts";
import { startUpstream } from "./upstream.ts";
import { benchWrites } from "./write-phase.ts";

const CONNECTIONS = 32;

/**
 * One Registry size: under load or not, and how many writes it times (0: none). Under load, per
 * size in `credentialBytes`, the CREDENTIAL_VARIANTS run again with credentials on, through a
 * Registry of the same Apps carrying a credential read from a key of their Secrets, and their
 * baselines again setting a fixed `Authorization` of the size.
 */
export interface LoadStage {
  readonly apps: number;
  readonly load: boolean;
  readonly credentialBytes: readonly number[];
  readonly writes: number;
}

/**
 * Rotations, on a cluster of their own: its Apps carry a credential and reach the upstream that
 * tells which Authorization it got.
 */
export interface RotationStage {
  readonly apps: number;
  readonly rotations: number;
  /** The bytes of each App's credential value. */
  readonly valueBytes: number;
}

/** TLS by SNI (ADR 56): certificates pushed against loaded from files, then rotations. */
export interface TlsStage {
  readonly apps: number;
  readonly certificates: number;
  readonly tlsRotations: number;
}

export type Stage = LoadStage | RotationStage | TlsStage;

/** Where a Registry whose Apps carry a credential of `bytes` is, beside the plain one. */
const credentialsNamespace = (bytes: number) => `platform-credentials-${bytes}`;

/**
 * The parts of a run (`--only` picks some): the load at 1k Apps; at 10k Apps, with credentials on
 * beside off; write to answer; rotation.
 */
export const PARTS = [
  "load-1k",
  "load-10k",
  "writes",
  "rotations",
  "tls",
  "writes-100k",
  "rotations-100k",
] as const;
export type Part = (typeof PARTS)[number];

/** Parts a quick run leaves out: the load at 10k Apps, and everything at 100k. */
const SLOW_PARTS: ReadonlySet<Part> = new Set(["load-10k", "writes-100k", "rotations-100k"]);

/** What a run does when `--only` does not say. */
export const defaultParts = (quick: boolean): ReadonlySet<Part> =>
  new Set(PARTS.filter((p) => !quick || !SLOW_PARTS.has(p)));

/**
 * The stages that run `parts`, with credentials of `credentialBytes`. Credentials on beside off
 * run at 10k Apps, where the target is (per credential size, four more variants in its rounds and
 * four proxies alone setting the header); a quick run tries them at 1k. Writes share the 10k
 * cluster.
 */
export function stagesOf(
  parts: ReadonlySet<Part>,
  quick: boolean,
  credentialBytes = CREDENTIAL_BYTES,
): Stage[] {
  const timed = quick ? 6 : 100;
  const stages: Stage[] = [];
  if (parts.has("load-1k"))
    stages.push({
      apps: 1_000,
      load: true,
      credentialBytes: quick ? credentialBytes : [],
      writes: 0,
    });
  if (parts.has("load-10k") || parts.has("writes"))
    stages.push({
      apps: 10_000,
      load: parts.has("load-10k"),
      credentialBytes: parts.has("load-10k") ? credentialBytes : [],
      writes: parts.has("writes") ? timed : 0,
    });
  if (parts.has("rotations"))
    for (const valueBytes of credentialBytes)
      stages.push({ apps: 10_000, rotations: timed, valueBytes });
  // A change costs in proportion to itself, not to the Registry (ADR 60): the same writes and
  // rotations at 100k Apps, beside the 10k ones.
  if (parts.has("writes-100k"))
    stages.push({ apps: 100_000, load: false, credentialBytes: [], writes: timed });
  if (parts.has("rotations-100k"))
    stages.push({ apps: 100_000, rotations: timed, valueBytes: credentialBytes[0]! });
  if (parts.has("tls"))
    stages.push(
      quick
        ? { apps: 1_000, certificates: 100, tlsRotations: timed }
        : { apps: 10_000, certificates: 1_000, tlsRotations: timed },
    );
  return stages;
}

/**
 * The data-plane suite: every proxy alone, in hop and in zero-hop mode, credentials on and off;
 * write to answer; rotation. `parts` picks some (default: `defaultParts`).
 */
export async function benchDataplanes(
  ctx: SuiteContext,
  parts: ReadonlySet<Part> = defaultParts(ctx.quick),
  credentialBytes = CREDENTIAL_BYTES,
): Promise<SuiteOutput> {
  // An odd number of rounds, so that a median ratio is one round's ratio.
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 1 : 3;
  // Every proxy's, also in a run BENCH_PROXIES filters: the upstream is nginx.
  const binaries = Object.fromEntries(
    ALL_PROXIES.map(({ kind }) => {
      const tool = findPlane(kind);
      if (tool.path === undefined) throw new Error(`${kind}: ${tool.missing}`);
      return [kind, tool.path];
    }),
  ) as Record<PlaneKind, string>;
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-bench-dataplanes-"));
  const upstream = await startUpstream(binaries.nginx, dir);
  const load = await startLoadGenerator();
  const o: PhaseOptions = {
    ctx,
    binaries,
    dir,
    upstream,
    load,
    rounds,
    seconds,
    connections: CONNECTIONS,
  };
  const sizes: Record<string, SizeData> = {};
  const writes: WriteToAnswerData[] = [];
  const rotations: RotationData[] = [];
  let tls: TlsData | undefined;
  const stageSeconds: Record<string, number> = {};
  try {
    for (const stage of stagesOf(parts, ctx.quick, credentialBytes)) {
      const started = performance.now();
      const timed = () => {
        stageSeconds[stageName(stage)] = Math.round((performance.now() - started) / 1000);
      };
      if ("rotations" in stage) {
        rotations.push(await rotationStage(stage, o));
        timed();
        continue;
      }
      if ("tlsRotations" in stage) {
        tls = await tlsStage(stage, o);
        timed();
        continue;
      }
      const cluster = await startClusterProcess(
        stage.apps,
        VALUE_BYTES,
        { upstream: upstream.url },
        extraKeys(stage.credentialBytes),
      );
      try {
        const credentialed = await Promise.all(
          stage.credentialBytes.map(async (bytes) => ({
            bytes,
            cluster: await cluster.withRegistry(credentialsNamespace(bytes), {
              upstream: upstream.url,
              credential: CREDENTIAL,
              key: credentialKey(bytes),
            }),
          })),
        );
        if (stage.load) sizes[stage.apps] = await benchLoad(cluster, o, { credentialed });
        if (stage.writes > 0) writes.push(await benchWrites(cluster, o, stage.writes));
      } finally {
        await cluster.close();
      }
      timed();
    }
  } finally {
    await load.close();
    await upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const data: DataplanesData = {
    rounds,
    seconds,
    connections: CONNECTIONS,
    load: load.name,
    upstream: "nginx, 2 workers, `return 200` (the same server for every variant)",
    versions: Object.fromEntries(
      PROXIES.map(({ kind }) => [kind, planeVersion(kind, binaries[kind])]),
    ) as Record<PlaneKind, string>,
    sizes,
    ...(writes.length === 0 ? {} : { writes }),
    ...(rotations.length === 0 ? {} : { rotations }),
    ...(tls === undefined ? {} : { tls }),
    stageSeconds,
  };
  return { rows: dataplaneRows(data), data };
}

/** "load 10k Apps, credentials on too (40 B, 1 KiB), 100 writes", "100 rotations at 10k Apps (40 B)". */
function stageName(stage: Stage): string {
  const apps = `${stage.apps / 1000}k Apps`;
  if ("tlsRotations" in stage) return `TLS, ${stage.certificates} certificates at ${apps}`;
  if ("rotations" in stage)
    return `${stage.rotations} rotations at ${apps} (${bytesLabel(stage.valueBytes)})`;
  const sizes = stage.credentialBytes.map(bytesLabel).join(", ");
  const parts = [
    ...(stage.load ? [`load ${apps}${sizes === "" ? "" : `, credentials on too (${sizes})`}`] : []),
    ...(stage.writes > 0 ? [`${stage.writes} writes${stage.load ? "" : ` at ${apps}`}`] : []),
  ];
  return parts.join(", ");
}

/** The rotations of `stage`, on a cluster of their own; stops what it started. */
async function rotationStage(stage: RotationStage, o: PhaseOptions): Promise<RotationData> {
  const seen = await startSeenUpstream();
  try {
    const cluster = await startClusterProcess(stage.apps, stage.valueBytes, {
      upstream: seen.url,
      credential: CREDENTIAL,
    });
    try {
      return await benchRotations(cluster, o, stage.rotations, stage.valueBytes);
    } finally {
      await cluster.close();
    }
  } finally {
    await seen.stop();
  }
}

/** TLS on a cluster of its own whose first Apps name a TLS Secret; stops what it started. */
async function tlsStage(stage: TlsStage, o: PhaseOptions): Promise<TlsData> {
  const cluster = await startClusterProcess(stage.apps, VALUE_BYTES, {
    upstream: o.upstream.url,
    tlsApps: stage.certificates,
  });
  try {
    const certificates = await benchCertificates(
      Array.from({ length: stage.certificates }, (_, i) => i),
    );
    await writeTlsSecrets(cluster, certificates);
    return await benchTls({
      cluster,
      certificates,
      view: benchView(stage.apps, certificates, o.upstream.url),
      binaries: o.binaries,
      dir: o.dir,
      env: o.ctx.env,
      load: o.load,
      rounds: o.rounds,
      seconds: o.seconds,
      connections: o.connections,
      rotations: stage.tlsRotations,
      hostsFile: writeHostsFile(stage.apps),
    });
  } finally {
    await cluster.close();
  }
}
