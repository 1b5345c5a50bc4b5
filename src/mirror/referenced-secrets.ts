import type { Clock } from "../clock.ts";
import { NEXT_TURN, type Schedule } from "../coalescer.ts";
import type { ApiError } from "../kube/cache/list-watch.ts";
import { retryAfterMs } from "../kube/cache/restart-policy.ts";
import type { Registry, SecretRef } from "../registry/schema.ts";
import { fetchSecrets, type SecretScope } from "./fetch-secrets.ts";
import type { MirrorObserver } from "./observer.ts";
import { SecretStore } from "./secret-store.ts";
import { addedSecrets, deriveWatchedSet, type Served, unionOf } from "./watched-set.ts";

/** Waits before fetching failed Secrets again: a schedule whose last delay repeats. */
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000, 30_000];

interface ReferencedSecretsOptions {
  readonly scopes: readonly SecretScope[];
  readonly clock: Clock;
  readonly observer: Required<Pick<MirrorObserver, "fetchFailed">>;
  /** What the process serves, which says which values are kept (ADR 68); default nothing. */
  readonly served?: Served;
  /** A retry of failed fetches fell due: the owner calls `retryFailed` when it can. */
  readonly onRetryDue: () => void;
  /** Runs a function on a later turn; default setImmediate. */
  readonly schedule?: Schedule;
}

/**
 * The App Secrets the served Registry references, and the only ones this replica keeps. Keeps the
 * store's watched set on them; fetches the Secrets a new Registry adds (their bytes were dropped
 * while nothing referenced them); schedules a retry of fetches that failed. `follow` and
 * `retryFailed` do network I/O and must not overlap: the owner runs them one at a time.
 */
export class ReferencedSecrets {
  /** The watches and the fetches write here; a rebuild reads its view. */
  readonly store = new SecretStore();
  readonly #options: ReferencedSecretsOptions;
  readonly #stop = new AbortController();
  #watched = deriveWatchedSet(null);
  /** Fetches that failed, waiting for their retry. */
  #failed: SecretRef[] = [];
  #attempt = 0;
  #retryDue = false;
  #cancelRetry: (() => void) | null = null;

  constructor(options: ReferencedSecretsOptions) {
    this.#options = options;
  }

  /**
   * Watches the Secrets `registry` references and fetches nothing: before the first list of the
   * App Secrets, which then keeps exactly them.
   */
  watch(registry: Registry | null): void {
    this.#watched = deriveWatchedSet(registry, this.#options.served);
    this.store.setWatched(this.#watched);
  }

  /**
   * Moves to the Secrets `registry` references, fetching the ones it adds, and drops what is kept
   * for the others. Resolves with the Secrets whose stored state the fetch changed.
   */
  async follow(registry: Registry | null): Promise<SecretRef[]> {
    const next = deriveWatchedSet(registry, this.#options.served);
    const added = addedSecrets(this.#watched, next);
    let changed: SecretRef[] = [];
    if (added.length > 0) {
      // Watch both sets while fetching: an event for an added Secret during the fetch is kept,
      // and the served Registry's Secrets keep what they hold until the new one is adopted.
      this.store.widenWatched(unionOf(this.#watched, next, added));
      changed = await this.#fetch(added);
    } else {
      // A turn between deriving the set and walking the store, as a fetch makes: at 100k Apps
      // the two with the Registry's decode before them were one stall of 315-550 ms.
      const schedule = this.#options.schedule ?? NEXT_TURN;
      await new Promise<void>((resolve) => schedule(resolve));
    }
    this.store.setWatched(next);
    this.#watched = next;
    this.#failed = this.#failed.filter((r) => next.has(r.namespace, r.name));
    return changed;
  }

  /** True while some referenced Secret could not be fetched and waits for a retry. */
  get failing(): boolean {
    return this.#failed.length > 0 || this.#retryDue;
  }

  /** Once a retry is due, fetches the still referenced Secrets whose fetch failed. */
  async retryFailed(): Promise<SecretRef[]> {
    if (!this.#retryDue) return [];
    this.#retryDue = false;
    const refs = this.#failed.filter((r) => this.#watched.has(r.namespace, r.name));
    this.#failed = [];
    return refs.length === 0 ? [] : this.#fetch(refs);
  }

  /** Aborts fetches in flight and cancels the retry. */
  stop(): void {
    this.#stop.abort();
    this.#cancelRetry?.();
  }

  async #fetch(refs: readonly SecretRef[]): Promise<SecretRef[]> {
    const outcome = await fetchSecrets(this.store, refs, {
      scopes: this.#options.scopes,
      signal: this.#stop.signal,
    });
    if (outcome.failed.length === 0) {
      this.#attempt = 0;
      return outcome.changed;
    }
    if (this.#stop.signal.aborted) return outcome.changed;
    this.#options.observer.fetchFailed(outcome.failed.length, describe(outcome.error));
    this.#failed.push(...outcome.failed);
    // A throttled server's Retry-After is honoured exactly, as the watches honour it, and the
    // schedule does not grow meanwhile: a retry long after the throttling ended converges late.
    const asked = retryAfterMs(outcome.error);
    const delay =
      asked > 0 ? asked : RETRY_DELAYS_MS[Math.min(this.#attempt++, RETRY_DELAYS_MS.length - 1)]!;
    this.#cancelRetry?.();
    this.#cancelRetry = this.#options.clock.setTimer(delay, () => {
      this.#cancelRetry = null;
      this.#retryDue = true;
      this.#options.onRetryDue();
    });
    return outcome.changed;
  }
}

function describe(error: ApiError | null): string {
  if (error === null) return "unknown";
  if (error.kind === "http") return `HTTP ${error.status}: ${error.message}`;
  return `${error.kind}: ${error.kind === "aborted" ? "" : error.message}`;
}
