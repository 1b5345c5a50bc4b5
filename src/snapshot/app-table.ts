import type { AppSpec } from "../registry/schema.ts";
import { resolveCertificate } from "./app-certificate.ts";
import { recordReplaced } from "./chunk-changes.ts";
import { credentialValue, stateOf } from "./credential.ts";
import { freezeArray } from "./freeze.ts";
import { readSecret } from "./read-secret.ts";
import type {
  App,
  AppTable,
  BuildMeta,
  CertificateBefore,
  NotReadyReason,
  SecretLookup,
} from "./types.ts";

/** What resolving an App reads of the build besides its inputs. */
export type ResolveMeta = Pick<BuildMeta, "builtAt" | "serveCredentials" | "serveCertificates">;

/** Apps per chunk: replacing one App copies this many pointers plus the chunk directory. */
export const CHUNK_SIZE = 64;

/**
 * Resolves one App against the Secrets this replica sees (docs/serving.md, "The situations"):
 * ready only if the referenced Secret exists, has the key, and the value is non-empty (kept or
 * not: UNKEPT_VALUE is non-empty), a key this replica has not read yet counting as the Secret
 * absent (`readSecret`); for an App with a `credential`, also only with `serveCredentials` (else
 * `credentials-off`, whatever the Secret) and a value `credentialValue` accepts. The leader's `secretReady` never gets here.
 * A certificate does not bear on readiness (`resolveCertificate`; `previous`: the same App in the
 * Snapshot before, whose certificate may be kept).
 */
export function resolveApp(
  spec: AppSpec,
  secrets: SecretLookup,
  meta: ResolveMeta,
  previous?: CertificateBefore,
): App {
  const { namespace, name, key } = spec.secretRef;
  const served = spec.credential !== null && meta.serveCredentials === true;
  const secret = readSecret(secrets, namespace, name, [key], served);
  // Own keys only: a Secret lacking key `constructor` must not read Object.prototype's.
  const value =
    secret !== undefined && Object.hasOwn(secret.data, key) ? secret.data[key] : undefined;
  let reason: NotReadyReason | null =
    secret === undefined
      ? "secret-absent"
      : value === undefined
        ? "key-missing"
        : value === ""
          ? "value-empty"
          : null;
  let credential: string | null = null;
  if (spec.credential !== null) {
    if (meta.serveCredentials !== true) reason = "credentials-off";
    else if (reason === null) {
      const header = credentialValue(value!);
      if (header.ok) credential = spec.credential.prefix + header.value;
      else reason = header.error;
    }
  }
  return Object.freeze({
    name: spec.name,
    hostnames: spec.hostnames,
    secretRef: spec.secretRef,
    upstream: spec.upstream,
    credentialPrefix: spec.credential?.prefix ?? null,
    ready: reason === null,
    reason,
    state: stateOf(reason),
    secretValue: credential === null ? null : value!,
    credential,
    secretResourceVersion: secret?.resourceVersion ?? null,
    tls: spec.tls,
    certificate: resolveCertificate(
      spec,
      secrets,
      meta.serveCertificates === true,
      meta.builtAt,
      previous,
    ),
  });
}

/** Builds the table for Apps in slot order; `previous(spec)`: the same App before, if any. */
export function buildAppTable(
  specs: readonly AppSpec[],
  secrets: SecretLookup,
  meta: ResolveMeta,
  previous: (spec: AppSpec) => CertificateBefore | undefined = () => undefined,
): AppTable {
  const chunks: (readonly App[])[] = [];
  let readyCount = 0;
  for (let start = 0; start < specs.length; start += CHUNK_SIZE) {
    const chunk: App[] = [];
    const end = Math.min(start + CHUNK_SIZE, specs.length);
    for (let slot = start; slot < end; slot++) {
      const spec = specs[slot]!;
      const app = resolveApp(spec, secrets, meta, spec.tls === null ? undefined : previous(spec));
      if (app.ready) readyCount++;
      chunk.push(app);
    }
    chunks.push(freezeArray(chunk));
  }
  return Object.freeze({ chunks: freezeArray(chunks), size: specs.length, readyCount });
}

/** The item in a slot of a chunked table; slots come from the RouteTable it was built with. */
export function appAt<A>(
  table: { readonly chunks: readonly (readonly A[])[] },
  slot: number,
): A | undefined {
  return table.chunks[Math.floor(slot / CHUNK_SIZE)]?.[slot % CHUNK_SIZE];
}

/** Items in slot order as frozen chunks of `CHUNK_SIZE`, the layout `appAt` reads. */
export function chunked<A>(items: readonly A[]): readonly (readonly A[])[] {
  const chunks: (readonly A[])[] = [];
  for (let start = 0; start < items.length; start += CHUNK_SIZE)
    chunks.push(freezeArray(items.slice(start, start + CHUNK_SIZE)));
  return freezeArray(chunks);
}

/**
 * New chunks with some slots replaced; every untouched chunk is shared with `chunks`, and which
 * were replaced is recorded (`changedChunks`). Cost: one chunk copy per touched chunk plus one
 * directory copy.
 */
export function replaceSlots<A>(
  chunks: readonly (readonly A[])[],
  replacements: ReadonlyMap<number, A>,
): readonly (readonly A[])[] {
  if (replacements.size === 0) return chunks;
  const next = [...chunks];
  const copied = new Map<number, A[]>();
  for (const [slot, item] of replacements) {
    const c = Math.floor(slot / CHUNK_SIZE);
    let chunk = copied.get(c);
    if (chunk === undefined) {
      chunk = [...next[c]!];
      copied.set(c, chunk);
    }
    chunk[slot % CHUNK_SIZE] = item;
  }
  for (const [c, chunk] of copied) next[c] = freezeArray(chunk);
  const frozen = freezeArray(next);
  recordReplaced(chunks, frozen, [...copied.keys()]);
  return frozen;
}

/** A new table with some slots replaced; every untouched chunk is shared with `table`. */
export function replaceApps(table: AppTable, replacements: ReadonlyMap<number, App>): AppTable {
  if (replacements.size === 0) return table;
  let readyCount = table.readyCount;
  for (const [slot, app] of replacements) {
    readyCount += (app.ready ? 1 : 0) - (appAt(table, slot)!.ready ? 1 : 0);
  }
  const chunks = replaceSlots(table.chunks, replacements);
  return Object.freeze({ chunks, size: table.size, readyCount });
}

/** Every App (or view of one) in slot order. */
export function* allApps<A>(table: { readonly chunks: readonly (readonly A[])[] }): Generator<A> {
  for (const chunk of table.chunks) yield* chunk;
}
