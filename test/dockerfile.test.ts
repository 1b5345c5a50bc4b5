import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const dockerfile = readFileSync("Dockerfile", "utf8");
const ignored = readFileSync(".dockerignore", "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "");
const packageJson = JSON.parse(readFileSync("package.json", "utf8")) as {
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};
const finalStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));

/** Whether .dockerignore keeps `path` out of the build context (a `!` line re-includes it). */
function excluded(path: string): boolean {
  let out = false;
  for (const line of ignored) {
    const negated = line.startsWith("!");
    const pattern = negated ? line.slice(1) : line;
    const regex = new RegExp(`^${pattern.replaceAll(".", "\\.").replaceAll("*", "[^/]*")}(/|$)`);
    if (regex.test(path)) out = !negated;
  }
  return out;
}

// One build for the tests that run it (each `npm run build` takes seconds, tens on a busy machine).
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-image-"));
  await run(process.execPath, ["scripts/build.ts", "--outdir", join(dir, "dist")]);
}, 180_000);
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("Dockerfile", () => {
  it("builds on Node 24 in every stage and runs as a numeric non-root user", () => {
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const image of froms) expect(image).toMatch(/^node:24-/);
    expect(/^USER (\d+):(\d+)$/m.exec(dockerfile)?.slice(1).map(Number)).toEqual([65532, 65532]);
  });

  it("copies only files that exist and that .dockerignore does not exclude", () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(" "),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true);
      expect(excluded(source.replace(/\/$/, "")), source).toBe(false);
    }
  });

  it("runs the artifact `npm run build` makes, and the final image holds nothing else", () => {
    const buildRun = /^RUN (node scripts\/build\.ts)$/m.exec(dockerfile)?.[1];
    expect(`node ${buildRun?.slice("node ".length)}`).toBe(packageJson.scripts.build);
    expect([...finalStage.matchAll(/^COPY .*$/gm)].map((m) => m[0])).toEqual([
      "COPY --from=build /app/dist ./dist",
    ]);
    const entry = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!) as string[];
    // V8 flags may stand between node and the bundle (BENCHMARKS.md chose them); nothing else.
    const v8Flags = entry.slice(1, -1);
    expect([entry[0], entry.at(-1)]).toEqual(["node", packageJson.bin["replica-mirror"]]);
    expect(v8Flags.filter((f) => !/^--[a-z][a-z0-9-]*(=\S+)?$/.test(f))).toEqual([]);
    expect(JSON.parse(/^CMD (.+)$/m.exec(dockerfile)![1]!)).toEqual(["serve"]);
  });

  it("the bundle runs from a directory with no node_modules and holds no fake API server", async () => {
    const out = join(dir, "dist");
    const entry = join(dir, packageJson.bin["replica-mirror"]!);
    const version = await run(process.execPath, [entry, "--version"], { cwd: dir });
    expect(version.stdout.trim()).toBe(packageJson.version);
    const help = await run(process.execPath, [entry, "serve", "--help"], { cwd: dir });
    expect(help.stdout).toContain("--registry-name NAME");

    const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as {
      outputs: Record<
        string,
        {
          inputs: Record<string, { bytesInOutput: number }>;
          imports?: { path: string; kind: string; external?: boolean }[];
        }
      >;
    };
    const inputs = Object.values(meta.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([path]) => path),
    );
    expect(inputs.filter((i) => i.includes("envtest") || i.startsWith("test/"))).toEqual([]);
    const generated = inputs.filter((i) => i.includes("@kubernetes/client-node/dist/gen/"));
    // KubeConfig needs its configuration and server types, not the 700 API models and clients.
    expect(generated.length).toBeLessThan(20);
    // No copy of undici loads at start (ADR 42): client-node's is a stub, and node:http is
    // required, never imported as an ES module, whose namespace would load Node's own.
    expect(inputs.filter((i) => i.includes("node_modules/undici/"))).toEqual([]);
    const code = (await readdir(out)).filter((f) => f.endsWith(".mjs"));
    const esmHttp = code.filter((f) =>
      /import[^;"]*from\s*"node:http"/.test(readFileSync(join(out, f), "utf8")),
    );
    expect(esmHttp).toEqual([]);
    // zod is imported as a namespace, which esbuild tree-shakes; its `z` export object would
    // keep every locale (ADR 14). Error messages are English only.
    const locales = inputs.filter((i) => /\/zod\/.*\/locales\//.test(i));
    expect(locales.map((i) => i.replace(/.*\/locales\//, ""))).toEqual(["en.js"]);
    // The small entry, and what it loads (`run`, and chunks shared with it).
    const modules = (await readdir(out)).filter((f) => f.endsWith(".mjs")).sort();
    expect([...new Set(modules.map((f) => f.replace(/-[A-Z0-9]+\.mjs$/, "")))]).toEqual([
      "chunk",
      "main.mjs",
      "run",
    ]);

    // The data thread's own bundle (ADR 27): only the route's code, none of the libraries the
    // main thread loads, so a second isolate costs what its route view costs and little more.
    const thread = JSON.parse(readFileSync(join(out, "data-thread.meta.json"), "utf8")) as {
      inputs: Record<string, unknown>;
    };
    const threadInputs = Object.keys(thread.inputs);
    expect(threadInputs.filter((i) => !i.startsWith("src/"))).toEqual([]);
    expect(
      threadInputs.filter(
        (i) =>
          !/^src\/(route|answers|snapshot|registry|runtime)\/|^src\/(result|clock)\.ts$/.test(i),
      ),
    ).toEqual([]);
    expect(threadInputs).toContain("src/route/worker.ts");
  }, 60_000);
});
