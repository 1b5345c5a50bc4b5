// What a user's data plane pays for the sidecar: each real proxy with its shipped hop
// configuration asking the shipped sidecar (synced against envtest) on every request, and with its
// shipped zero-hop configuration answering from the table its own sidecar pushes, against the same
// proxy routing every host straight to the same upstream, in alternating rounds of one run
// (load-phase.ts); then, at 10k Apps, the time from an API write to the proxy's new answer
// (write-phase.ts).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPlane, type PlaneKind } from "../../test/support/data-plane.ts";
import { startCluster } from "../cluster.ts";
import { startLoadGenerator } from "../load.ts";
import type { SuiteContext, SuiteOutput } from "../suite.ts";
import type { DataplanesData, SizeData, WriteToAnswerData } from "./data.ts";
import { benchLoad, type PhaseOptions } from "./load-phase.ts";
import { PROXIES, planeVersion } from "./proxies.ts";
import { dataplaneRows } from "./report.ts";
import { startUpstream } from "./upstream.ts";
import { benchWrites } from "./write-phase.ts";

const CONNECTIONS = 32;

/** One Registry size: whether it runs under load, and how many writes it times (0: none). */
interface Stage {
  readonly apps: number;
  readonly load: boolean;
  readonly writes: number;
}

// A quick run loads 1k Apps only, and times a few writes at 10k, where the target is.
const QUICK: readonly Stage[] = [
  { apps: 1_000, load: true, writes: 0 },
  { apps: 10_000, load: false, writes: 6 },
];
const FULL: readonly Stage[] = [
  { apps: 1_000, load: true, writes: 0 },
  { apps: 10_000, load: true, writes: 100 },
];

/** The data-plane suite: every proxy alone, in hop and in zero-hop mode; write to answer. */
export async function benchDataplanes(ctx: SuiteContext): Promise<SuiteOutput> {
  // An odd number of rounds, so that a median ratio is one round's ratio.
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 1 : 3;
  const binaries = Object.fromEntries(
    PROXIES.map(({ kind }) => {
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
  let writeToAnswer: WriteToAnswerData | undefined;
  try {
    for (const stage of ctx.quick ? QUICK : FULL) {
      const cluster = await startCluster(stage.apps, 1024, { upstream: upstream.url });
      try {
        if (stage.load) sizes[stage.apps] = await benchLoad(cluster, o);
        if (stage.writes > 0) writeToAnswer = await benchWrites(cluster, o, stage.writes);
      } finally {
        await cluster.close();
      }
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
    ...(writeToAnswer === undefined ? {} : { writeToAnswer }),
  };
  return { rows: dataplaneRows(data), data };
}
