import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { parseRegistry } from "../registry/parse.ts";
import { build } from "../snapshot/build.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/**
 * `registry validate FILE`: the same path-named errors the mirror logs, then exit 1 (an App the
 * mirror would refuse alone counts: the document is not valid); on a valid document, a summary
 * and any hostname conflicts (warnings, exit 0). `--allow-local-upstreams true` relaxes the rule
 * as `serve`'s flag does.
 */
export async function runValidate(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<number> {
  const usage =
    "usage: replica-mirror registry validate FILE [--namespace NS] [--allow-local-upstreams true|false]";
  let parsed: {
    values: { namespace?: string | undefined; "allow-local-upstreams"?: string | undefined };
    positionals: string[];
  };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        namespace: { type: "string", default: "default" },
        "allow-local-upstreams": { type: "string", default: "false" },
      },
      allowPositionals: true,
    });
  } catch {
    out(usage);
    return 2;
  }
  const namespace = parsed.values.namespace ?? "";
  const allowLocal = parsed.values["allow-local-upstreams"];
  const files = parsed.positionals;
  if (files.length !== 1 || namespace === "" || (allowLocal !== "true" && allowLocal !== "false")) {
    out(usage);
    return 2;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(files[0]!);
  } catch (e) {
    out(`${files[0]}: ${(e as Error).message}`);
    return 1;
  }
  const document = parseRegistry(bytes, {
    defaultNamespace: namespace,
    allowLocalUpstreams: allowLocal === "true",
  });
  if (!document.ok) {
    for (const issue of document.error.issues) out(`${files[0]}: ${issue}`);
    return 1;
  }
  // The mirror would serve the other Apps; the document is still not valid.
  const { refused } = document.value;
  for (const r of refused)
    for (const issue of r.reason.split("; ")) out(`${files[0]}: apps[${r.index}].${issue}`);
  if (refused.length > 0) return 1;
  const snapshot = build(document.value.registry, new SecretIndex(), {
    revision: 1,
    builtAt: 0,
    registry: {
      present: true,
      resourceVersion: null,
      error: null,
      refusedApps: [],
      contentHash: null,
    },
  });
  const { apps } = document.value.registry;
  const credentials = apps.filter((a) => a.credential !== null).length;
  const certificates = apps.filter((a) => a.tls !== null).length;
  out(
    `${files[0]}: valid: ${snapshot.apps.size} Apps, ${snapshot.routes.hostnameCount} hostnames${credentialsNote(credentials)}${certificatesNote(certificates)}`,
  );
  for (const c of snapshot.routes.conflicts) {
    out(
      `${files[0]}: warning: ${c.hostname} is claimed by ${[c.winner, ...c.losers].join(", ")}; ${c.winner} serves it`,
    );
  }
  return 0;
}

/** What the summary says of the Apps with a `credential`: they need `serve`'s flag to be served. */
function credentialsNote(count: number): string {
  if (count === 0) return "";
  const apps = count === 1 ? "1 App sends its Secret" : `${count} Apps send their Secrets`;
  return `; ${apps} as Authorization (--serve-credentials)`;
}

/** What the summary says of the Apps with `tls`: their certificates need `serve`'s flag too. */
function certificatesNote(count: number): string {
  if (count === 0) return "";
  const apps = count === 1 ? "1 App has its" : `${count} Apps have their`;
  return `; ${apps} own certificate (--serve-certificates)`;
}
