// `npm run build`: the production artifact. One bundled ESM CLI in dist/ (ADR 14): a small entry
// that spawns the data thread and the chunk it loads with the rest; the data thread's own
// CommonJS bundle (ADR 27) and the Registry check thread's (ADR 88), each with a source map.
// Nothing under node_modules is needed at run time.

import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build, type Plugin } from "esbuild";

/**
 * client-node's modules are side-effect-free (classes and functions; the generated models only
 * register themselves with an ObjectSerializer the sidecar never calls), but its package.json
 * does not say so, so a bundler keeps every module its index reaches (over 700, with ws, tar and
 * the API clients) although the sidecar uses only KubeConfig. Saying so lets tree-shaking drop
 * the rest; the build test checks the bundle holds almost none of the generated models, and runs
 * the bundle against envtest.
 */
const clientNodeIsPure: Plugin = {
  name: "client-node-side-effect-free",
  setup(b) {
    b.onResolve({ filter: /^@kubernetes\/client-node$|^\.\.?\// }, async (args) => {
      const bare = args.path === "@kubernetes/client-node";
      if (!bare && !args.importer.includes("@kubernetes/client-node/dist/")) return undefined;
      if (args.pluginData === "resolved") return undefined;
      // Inside the package every import names its file: joined here, not by `b.resolve`, which
      // builds a new resolver per call (esbuild issue 3795): the build took 8.5 s, now 1.7 s.
      const path = bare
        ? (
            await b.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: "resolved",
            })
          ).path
        : join(args.resolveDir, args.path);
      if (!path.includes("/client-node/dist/") || !existsSync(path)) return undefined;
      return { path, sideEffects: false };
    });
  },
};

/**
 * No copy of undici is loaded at start; the sidecar never uses one. client-node's KubeConfig
 * imports the npm package for its fetch-based API clients (`makeApiClient`), which the sidecar
 * does not call (it authenticates through `applyToHTTPSOptions`): a stub stands in, and throws
 * if a client-node update ever reaches it. And an ES module import of node:http makes Node build
 * the module's namespace, whose lazy WebSocket, CloseEvent and MessageEvent getters load Node's
 * own copy: the bundle requires node:http instead (its CommonJS dependencies already do).
 */
const noUndici: Plugin = {
  name: "no-undici",
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: "undici", namespace: "no-undici" }));
    b.onLoad({ filter: /^undici$/, namespace: "no-undici" }, () => ({
      contents: `function unused() { throw new Error("replica-mirror bundles no undici: client-node's fetch API clients are not part of the sidecar"); }
export class Agent { constructor() { unused(); } }
export class ProxyAgent { constructor() { unused(); } }
export function fetch() { unused(); }`,
      loader: "js",
    }));
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === "require-call"
        ? { path: "node:http", external: true }
        : { path: "node:http", namespace: "no-undici" },
    );
    b.onLoad({ filter: /^node:http$/, namespace: "no-undici" }, () => ({
      contents: 'module.exports = require("node:http");',
      loader: "js",
    }));
  },
};

/**
 * The data thread's file, beside the chunk that starts it. CommonJS: a worker that boots as an ES
 * module pays for its own ES-module loader, 6 MiB of resident memory and 70 ms more per start on
 * the machine of BENCHMARKS.md (ADR 27).
 */
const DATA_THREAD = "data-thread.cjs";
/** The Registry check thread's file (ADR 88), CommonJS for the same reason. */
const REGISTRY_THREAD = "registry-thread.cjs";

// Whitespace and syntax only: the source is kept in the heap for lazy compilation, and names
// stay readable in stack traces (fastify and avvio also read function names).
const minify = { minifyWhitespace: true, minifySyntax: true } as const;

/** The bundle plugins, by name: what `buildArtifact` applies unless told to leave one out. */
export const BUNDLE_PLUGINS = {
  "client-node-side-effect-free": clientNodeIsPure,
  "no-undici": noUndici,
} as const;

export interface BuildOptions {
  readonly outdir: string;
  /** Bundle plugins left out (benchmarks measure what each one pays). */
  readonly without?: readonly (keyof typeof BUNDLE_PLUGINS)[];
  /** Plugins applied first to both bundles (benchmarks replace a module with a variant). */
  readonly extraPlugins?: readonly Plugin[];
  /** Print the size of each output. */
  readonly report?: boolean;
}

/** Builds the artifact into `outdir`, replacing what was there. */
export async function buildArtifact(options: BuildOptions): Promise<void> {
  const OUT = options.outdir;
  const extra = options.extraPlugins ?? [];
  const plugins = Object.entries(BUNDLE_PLUGINS)
    .filter(([name]) => !(options.without ?? []).includes(name as keyof typeof BUNDLE_PLUGINS))
    .map(([, plugin]) => plugin);
  await rm(OUT, { recursive: true, force: true });
  const [thread, registryThread] = await Promise.all([
    buildThread("data-thread", "src/route/worker.ts", extra, OUT),
    buildThread("registry-thread", "src/sidecar/registry-check-worker.ts", extra, OUT),
  ]);
  const result = await build({
    entryPoints: { main: "src/cli/main.ts" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node24",
    outdir: OUT,
    outExtension: { ".js": ".mjs" },
    chunkNames: "[name]-[hash]",
    sourcemap: "linked",
    ...minify,
    define: {
      REPLICA_MIRROR_DATA_THREAD: JSON.stringify(`./${DATA_THREAD}`),
      REPLICA_MIRROR_REGISTRY_THREAD: JSON.stringify(`./${REGISTRY_THREAD}`),
    },
    metafile: true,
    legalComments: "linked",
    logLevel: "warning",
    // Bundled CommonJS modules call require() for Node's built-ins; ESM output has no require.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    plugins: [...extra, ...plugins],
  });
  await writeFile(`${OUT}/meta.json`, JSON.stringify(result.metafile));
  await writeFile(`${OUT}/data-thread.meta.json`, JSON.stringify(thread.metafile));
  await writeFile(`${OUT}/registry-thread.meta.json`, JSON.stringify(registryThread.metafile));
  const sizes = Object.entries({
    ...result.metafile.outputs,
    ...thread.metafile.outputs,
    ...registryThread.metafile.outputs,
  })
    .filter(([file]) => /\.[cm]js$/.test(file))
    .map(([file, out]) => `${file} ${(out.bytes / 1024).toFixed(0)} KiB`);
  if (options.report === true) console.log(sizes.join("\n"));
}

/** A thread's own CommonJS bundle, `<name>.cjs` in `outdir`. */
function buildThread(name: string, entry: string, plugins: readonly Plugin[], outdir: string) {
  return build({
    entryPoints: { [name]: entry },
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    outdir,
    outExtension: { ".js": ".cjs" },
    sourcemap: "linked",
    ...minify,
    metafile: true,
    legalComments: "linked",
    logLevel: "warning",
    plugins: [...plugins],
  });
}

if (import.meta.main) {
  // `--outdir DIR` (default dist): the build test builds into a temporary directory.
  const { outdir } = parseArgs({ options: { outdir: { type: "string", default: "dist" } } }).values;
  await buildArtifact({ outdir, report: true });
}
