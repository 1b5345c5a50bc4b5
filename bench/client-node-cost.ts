import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, median, type Row } from "./measure.ts";
import { ROOT } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const PROBE = fileURLToPath(new URL("./baselines/import.mjs", import.meta.url));
const KiB = 1024;

/** What is loaded, and how: each run is `node <flags> <args>`, spawn to exit. */
const VARIANTS: readonly { readonly name: string; readonly args: readonly string[] }[] = [
  { name: "node, nothing imported", args: [PROBE] },
  { name: "client-node package index", args: [PROBE, "@kubernetes/client-node"] },
  {
    name: "client-node deep import (dist/config.js)",
    args: [PROBE, "@kubernetes/client-node/dist/config.js"],
  },
  { name: "the bundle: dist/main.mjs --version", args: [join(ROOT, "dist/main.mjs"), "--version"] },
  {
    name: "the sources unbundled: src/cli/main.ts --version",
    args: [join(ROOT, "src/cli/main.ts"), "--version"],
  },
];

/**
 * What importing @kubernetes/client-node costs, three ways: its package index, the one module the
 * sidecar imports, and the bundle (the whole sidecar, whose client-node part is tree-shaken), next
 * to node importing nothing and the unbundled sources: spawn to exit and peak RSS (/usr/bin/time),
 * rotating in rounds, with the image's flags and environment. Plus client-node's share of the bundle.
 */
export async function benchClientNode(ctx: SuiteContext): Promise<SuiteOutput> {
  const rounds = ctx.quick ? 1 : 9;
  // Quick mode leaves out the slowest, the unbundled sources.
  const variants = ctx.quick ? VARIANTS.slice(0, -1) : VARIANTS;
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const rss = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (const v of variants) await run(v.args, ctx); // one untimed run each: the page cache warm
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(i + r) % variants.length]!;
      const out = await run(v.args, ctx);
      times.get(v.name)!.push(out.ms);
      rss.get(v.name)!.push(out.maxRss);
    }
  }
  const floor = median(times.get(VARIANTS[0]!.name)!);
  const floorRss = median(rss.get(VARIANTS[0]!.name)!);
  const rows: Row[] = variants.map((v) => {
    const t = median(times.get(v.name)!);
    const m = median(rss.get(v.name)!);
    return {
      bench: `import cost: ${v.name} (spawn to exit, peak RSS; median of ${rounds})`,
      figure: `${fmt(t, 0)} ms, ${fmt(m / KiB / KiB, 0)} MiB`,
      baseline: `node, nothing imported: ${fmt(floor, 0)} ms, ${fmt(floorRss / KiB / KiB, 0)} MiB`,
      ratio: `+${fmt(t - floor, 0)} ms, +${fmt((m - floorRss) / KiB / KiB, 0)} MiB`,
      target: "-",
      met: "-",
    };
  });
  const share = bundleShare();
  rows.push({
    bench: "client-node in the bundle: modules / bytes of code",
    figure: `${share.clientNode.modules} modules, ${fmt(share.clientNode.bytes / KiB, 0)} KiB`,
    baseline: `whole bundle ${share.all.modules} modules, ${fmt(share.all.bytes / KiB, 0)} KiB; client-node's dist ${share.clientNodeDist.modules} modules`,
    ratio: `${fmt((share.clientNode.bytes / share.all.bytes) * 100, 0)}% of the bundle`,
    target: "-",
    met: "-",
  });
  return {
    rows,
    data: {
      rounds,
      variants: variants.map((v) => ({
        name: v.name,
        ms: times.get(v.name),
        maxRss: rss.get(v.name),
      })),
      bundle: share,
    },
  };
}

/** Spawn to exit of `node <flags> <args>`, and its peak RSS in bytes. */
function run(args: readonly string[], ctx: SuiteContext): Promise<{ ms: number; maxRss: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      "/usr/bin/time",
      ["-f", "maxrss=%M", process.execPath, ...ctx.nodeFlags, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, ...ctx.env },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.once("exit", (code) => {
      const ms = performance.now() - t0;
      const kib = /maxrss=(\d+)/.exec(err)?.[1];
      if (code !== 0 || kib === undefined)
        reject(new Error(`${args.join(" ")}: exit ${code}: ${err}`));
      else resolve({ ms, maxRss: Number(kib) * KiB });
    });
  });
}

/** Modules and bytes in the bundle (dist/meta.json): all of them, and client-node's. */
function bundleShare() {
  const meta = JSON.parse(readFileSync(join(ROOT, "dist/meta.json"), "utf8")) as {
    inputs: Record<string, unknown>;
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const used = Object.values(meta.outputs).flatMap((o) =>
    Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0),
  );
  const sum = (xs: typeof used) => ({
    modules: xs.length,
    bytes: xs.reduce((n, [, i]) => n + i.bytesInOutput, 0),
  });
  const isClientNode = (p: string) => p.includes("@kubernetes/client-node/");
  return {
    all: sum(used),
    clientNode: sum(used.filter(([p]) => isClientNode(p))),
    clientNodeDist: { modules: Object.keys(meta.inputs).filter(isClientNode).length },
  };
}
