// nginx zero-hop's C module (ADR 86), built from manifests/data-planes/nginx/zero-hop/module/ for
// the tests and the bench, which load it from there instead of nginx's modules directory: built
// once, and again whenever a source is newer than the .so.

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const MODULE_DIR = resolve("manifests/data-planes/nginx/zero-hop/module");
const SO = "ngx_http_replica_mirror_module.so";
/** Where the shipped nginx.conf loads it from. */
export const SHIPPED_MODULE = `/usr/lib/nginx/modules/${SO}`;

async function mtime(path: string): Promise<number> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return -1;
  }
}

let built: Promise<string> | undefined;

/** The module's .so, built first when missing or older than its sources (needs nginx-dev). */
export function nginxModule(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  const target = join(MODULE_DIR, "build", SO);
  const sources = (await readdir(MODULE_DIR)).filter((f) => f !== "build");
  const newest = Math.max(...(await Promise.all(sources.map((f) => mtime(join(MODULE_DIR, f))))));
  if ((await mtime(target)) >= newest) return target;
  // Test files run in parallel: each builds into its own directory, and the rename is atomic.
  await mkdir(join(MODULE_DIR, "build"), { recursive: true });
  const out = await mkdtemp(join(MODULE_DIR, "build", ".tmp-"));
  try {
    await promisify(execFile)("bash", [join(MODULE_DIR, "build.sh"), out], { timeout: 300_000 });
    await rename(join(out, SO), target);
  } catch (e) {
    throw new Error(`building the nginx module (${MODULE_DIR}/build.sh): ${(e as Error).message}`);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  return target;
}

/** `conf` routing in Lua: the C module's lines swapped for the Lua phases they replaced. */
export const withLuaRoutes = (conf: string): string =>
  conf
    .replace(/^load_module \S*ngx_http_replica_mirror_module\.so;\n/m, "")
    .replace(/^\s*replica_mirror_zone .*\n/m, "")
    .replace("replica_mirror_balancer;", "balancer_by_lua_block { replica_mirror.balance() }")
    .replace("replica_mirror_route on;", "access_by_lua_block { replica_mirror.route() }");
