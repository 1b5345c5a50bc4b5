import type { AppSpec } from "../registry/schema.ts";
import { freezeArray } from "./freeze.ts";
import type { App, AppTable, SecretsView } from "./types.ts";

/** Apps per chunk: replacing one App copies this many pointers plus the chunk directory. */
const CHUNK_SIZE = 64;

/**
 * Resolves one App against the Secrets this replica sees: ready only if the referenced Secret
 * exists, has the key, and the value is non-empty. The leader's `secretReady` never gets here.
 */
export function resolveApp(spec: AppSpec, secrets: SecretsView): App {
  const secret = secrets.get(spec.secretRef.namespace, spec.secretRef.name);
  const value = secret === undefined ? undefined : secret.data[spec.secretRef.key];
  const reason =
    secret === undefined
      ? "secret-absent"
      : value === undefined
        ? "key-missing"
        : value === ""
          ? "value-empty"
          : null;
  return Object.freeze({
    name: spec.name,
    hostnames: spec.hostnames,
    secretRef: spec.secretRef,
    upstream: spec.upstream,
    ready: reason === null,
    reason,
    secretValue: reason === null ? (value ?? null) : null,
    secretResourceVersion: secret?.resourceVersion ?? null,
  });
}

/** Builds the table for Apps in slot order. */
export function buildAppTable(specs: readonly AppSpec[], secrets: SecretsView): AppTable {
  const chunks: (readonly App[])[] = [];
  let readyCount = 0;
  for (let start = 0; start < specs.length; start += CHUNK_SIZE) {
    const chunk: App[] = [];
    const end = Math.min(start + CHUNK_SIZE, specs.length);
    for (let slot = start; slot < end; slot++) {
      const app = resolveApp(specs[slot]!, secrets);
      if (app.ready) readyCount++;
      chunk.push(app);
    }
    chunks.push(freezeArray(chunk));
  }
  return Object.freeze({ chunks: freezeArray(chunks), size: specs.length, readyCount });
}

/** The App in a slot; slots come from the RouteTable the table was built with. */
export function appAt(table: AppTable, slot: number): App | undefined {
  return table.chunks[Math.floor(slot / CHUNK_SIZE)]?.[slot % CHUNK_SIZE];
}

/**
 * A new table with some slots replaced; every untouched chunk is shared with `table`.
 * Cost: one chunk copy per touched chunk plus one directory copy.
 */
export function replaceApps(table: AppTable, replacements: ReadonlyMap<number, App>): AppTable {
  if (replacements.size === 0) return table;
  const chunks = [...table.chunks];
  const copied = new Map<number, App[]>();
  let readyCount = table.readyCount;
  for (const [slot, app] of replacements) {
    const c = Math.floor(slot / CHUNK_SIZE);
    let chunk = copied.get(c);
    if (chunk === undefined) {
      chunk = [...chunks[c]!];
      copied.set(c, chunk);
    }
    const previous = chunk[slot % CHUNK_SIZE]!;
    readyCount += (app.ready ? 1 : 0) - (previous.ready ? 1 : 0);
    chunk[slot % CHUNK_SIZE] = app;
  }
  for (const [c, chunk] of copied) chunks[c] = freezeArray(chunk);
  return Object.freeze({ chunks: freezeArray(chunks), size: table.size, readyCount });
}

/** Every App in slot order. */
export function* allApps(table: AppTable): Generator<App> {
  for (const chunk of table.chunks) yield* chunk;
}
