import type { ApiError, ListWatch } from "../kube/list-watch.ts";
import type { SecretRef } from "../registry/schema.ts";
import type { SecretStore } from "./secret-store.ts";

/** The ListWatch that covers one namespace (null: every namespace). */
export interface SecretScope {
  readonly namespace: string | null;
  readonly listWatch: ListWatch;
}

interface FetchOptions {
  readonly scopes: readonly SecretScope[];
  /** A label selector on App Secrets: GETs ignore selectors, so fetching then goes through lists. */
  readonly selective: boolean;
  readonly signal: AbortSignal;
}

interface FetchOutcome {
  /** Secrets whose stored state changed. */
  readonly changed: SecretRef[];
  /** Secrets that could not be fetched, with the first error. */
  readonly failed: SecretRef[];
  readonly error: ApiError | null;
}

/** Up to this many newly referenced Secrets are fetched one GET each; more, and a list is cheaper. */
const MAX_GETS = 64;
const GET_CONCURRENCY = 8;
const PAGE_SIZE = 500;

/**
 * Brings the store up to date for Secrets that just became referenced, whose bytes were dropped
 * while nothing referenced them. The store orders results against watch events by
 * resourceVersion, so a fetch that races the watch never installs older state.
 */
export async function fetchSecrets(
  store: SecretStore,
  refs: readonly SecretRef[],
  options: FetchOptions,
): Promise<FetchOutcome> {
  const covered = refs.filter((r) => scopeFor(options.scopes, r.namespace) !== undefined);
  if (covered.length === 0) return { changed: [], failed: [], error: null };
  if (options.selective || covered.length > MAX_GETS) return listInto(store, covered, options);
  return getInto(store, covered, options);
}

function scopeFor(scopes: readonly SecretScope[], namespace: string): SecretScope | undefined {
  return scopes.find((s) => s.namespace === namespace) ?? scopes.find((s) => s.namespace === null);
}

async function getInto(
  store: SecretStore,
  refs: readonly SecretRef[],
  options: FetchOptions,
): Promise<FetchOutcome> {
  const changed: SecretRef[] = [];
  const failed: SecretRef[] = [];
  let error: ApiError | null = null;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < refs.length; i = next++) {
      const ref = refs[i]!;
      const got = await scopeFor(options.scopes, ref.namespace)!.listWatch.get(
        ref.namespace,
        ref.name,
        options.signal,
      );
      if (!got.ok) {
        failed.push(ref);
        error ??= got.error;
      } else if (got.value !== null && store.apply("upsert", got.value, "get") === "changed") {
        changed.push(ref);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(GET_CONCURRENCY, refs.length) }, worker));
  return { changed, failed, error };
}

async function listInto(
  store: SecretStore,
  refs: readonly SecretRef[],
  options: FetchOptions,
): Promise<FetchOutcome> {
  const wanted = new Set(refs.map((r) => `${r.namespace}/${r.name}`));
  const scopes = new Set(refs.map((r) => scopeFor(options.scopes, r.namespace)!));
  const changed: SecretRef[] = [];
  const failed: SecretRef[] = [];
  let error: ApiError | null = null;
  for (const scope of scopes) {
    let continueToken: string | undefined;
    do {
      const page = await scope.listWatch.list({
        limit: PAGE_SIZE,
        signal: options.signal,
        ...(continueToken === undefined ? {} : { continue: continueToken }),
      });
      if (!page.ok) {
        error ??= page.error;
        failed.push(...refs.filter((r) => scopeFor(options.scopes, r.namespace) === scope));
        break;
      }
      for (const item of page.value.items) {
        const { namespace, name } = item.metadata;
        if (
          wanted.has(`${namespace}/${name}`) &&
          store.apply("upsert", item, "get") === "changed"
        ) {
          changed.push({ namespace, name });
        }
      }
      continueToken = page.value.continue;
    } while (continueToken !== undefined);
  }
  return { changed, failed, error };
}
