import type { ApiError, ListWatch } from "../kube/cache/list-watch.ts";
import type { SecretRef } from "../registry/schema.ts";
import type { SecretStore } from "./secret-store.ts";

/** The ListWatch that covers one namespace (null: every namespace). */
export interface SecretScope {
  readonly namespace: string | null;
  readonly listWatch: ListWatch;
}

interface FetchOptions {
  readonly scopes: readonly SecretScope[];
  readonly signal: AbortSignal;
}

interface FetchOutcome {
  /** Secrets whose stored state changed. */
  readonly changed: SecretRef[];
  /** Secrets that could not be fetched, with the first error. */
  readonly failed: SecretRef[];
  readonly error: ApiError | null;
}

/**
 * GETs in flight at once: enough to fetch a thousand newly referenced Secrets in well under a
 * second on a healthy API server, few enough that a fleet of replicas fetching at the same time
 * does not queue up in its priority level (ADR 15).
 */
const GET_CONCURRENCY = 8;

/**
 * Brings the store up to date for Secrets that just became referenced, whose bytes were dropped
 * while nothing referenced them: one GET each (a name-selected list where a label selector
 * applies), so the cost grows with the Secrets referenced, never with the Secrets in the cluster
 *. The store orders results against watch events by resourceVersion, so a fetch that
 * races the watch never installs older state.
 */
export async function fetchSecrets(
  store: SecretStore,
  refs: readonly SecretRef[],
  options: FetchOptions,
): Promise<FetchOutcome> {
  const covered = refs.filter((r) => scopeFor(options.scopes, r.namespace) !== undefined);
  const changed: SecretRef[] = [];
  const failed: SecretRef[] = [];
  let error: ApiError | null = null;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < covered.length; i = next++) {
      const ref = covered[i]!;
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
  await Promise.all(Array.from({ length: Math.min(GET_CONCURRENCY, covered.length) }, worker));
  return { changed, failed, error };
}

function scopeFor(scopes: readonly SecretScope[], namespace: string): SecretScope | undefined {
  return scopes.find((s) => s.namespace === namespace) ?? scopes.find((s) => s.namespace === null);
}
