import { readFile } from "node:fs/promises";
import { parseRegistry } from "../registry/parse.ts";
import { build } from "../snapshot/build.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/**
 * `registry validate FILE`: the same path-named errors the mirror logs, then exit 1; on a valid
 * document, a summary and any hostname conflicts (warnings, exit 0).
 */
export async function runValidate(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<number> {
  let namespace = "default";
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--namespace") namespace = argv[++i] ?? "";
    else if (arg.startsWith("--namespace=")) namespace = arg.slice("--namespace=".length);
    else files.push(arg);
  }
  if (files.length !== 1 || namespace === "") {
    out("usage: replica-mirror registry validate FILE [--namespace NS]");
    return 2;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(files[0]!);
  } catch (e) {
    out(`${files[0]}: ${(e as Error).message}`);
    return 1;
  }
  const parsed = parseRegistry(bytes, { defaultNamespace: namespace });
  if (!parsed.ok) {
    for (const issue of parsed.error.issues) out(`${files[0]}: ${issue}`);
    return 1;
  }
  const snapshot = build(parsed.value, new SecretIndex(), {
    revision: 1,
    builtAt: 0,
    registry: { present: true, resourceVersion: null, error: null },
  });
  out(`${files[0]}: valid: ${snapshot.apps.size} Apps, ${snapshot.routes.hostnameCount} hostnames`);
  for (const c of snapshot.routes.conflicts) {
    out(
      `${files[0]}: warning: ${c.hostname} is claimed by ${[c.winner, ...c.losers].join(", ")}; ${c.winner} serves it`,
    );
  }
  return 0;
}
