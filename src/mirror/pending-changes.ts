import type { SecretRef } from "../registry/schema.ts";
import type { ServedRegistry } from "./registry-tracker.ts";

/** What changed since the last rebuild: one value, taken whole by the next rebuild. */
export interface Changes {
  /**
   * The newest Registry adopted since (the Secrets it newly references were fetched, or failed),
   * or null when none was; `whole`: its document changed, not only its status, so the next
   * Snapshot is built whole.
   */
  readonly registry: (ServedRegistry & { readonly whole: boolean }) | null;
  /** Secrets whose stored state changed, in the order they did (a Secret may repeat). */
  readonly secrets: readonly SecretRef[];
  /** When the oldest event behind these changes was received (clock ms); null: none was. */
  readonly since: number | null;
}

/** Nothing changed. */
export const NO_CHANGES: Changes = Object.freeze({ registry: null, secrets: [], since: null });

/**
 * The hand-off between the event handlers and the rebuild. Handlers and the Registry's adoption
 * mark what changed; each rebuild takes everything marked so far and leaves nothing behind, so a
 * coalesced signal loses nothing. A Registry event counts from when it was received, but joins
 * the changes only once its Registry is adopted: a rebuild that runs before then is not about it.
 */
export class PendingChanges {
  #registry: Changes["registry"] = null;
  #secrets: SecretRef[] = [];
  #since: number | null = null;
  /** When the oldest Registry event not adopted yet was received. */
  #registryReceived: number | null = null;

  /** A Registry event was received at `at`. */
  registryReceived(at: number): void {
    this.#registryReceived ??= at;
  }

  /** A Registry was adopted; `whole` when its document differs from the one adopted before. */
  registryAdopted(served: ServedRegistry, whole: boolean): void {
    const adopted = { registry: served.registry, status: served.status };
    this.#registry = { ...adopted, whole: whole || this.#registry?.whole === true };
    if (this.#registryReceived !== null) this.#noteSince(this.#registryReceived);
    this.#registryReceived = null;
  }

  /** Secrets whose stored state changed: from events received at `at`, or from a fetch (null). */
  secretsChanged(refs: readonly SecretRef[], at: number | null): void {
    if (refs.length === 0) return;
    // One at a time: spreading a relist's deletions could exceed the argument limit.
    for (const ref of refs) this.#secrets.push(ref);
    if (at !== null) this.#noteSince(at);
  }

  /** True when nothing is marked. */
  get empty(): boolean {
    return this.#registry === null && this.#secrets.length === 0 && this.#since === null;
  }

  /** Everything marked so far; the pending changes are empty afterwards. */
  take(): Changes {
    if (this.#registry === null && this.#secrets.length === 0 && this.#since === null)
      return NO_CHANGES;
    const changes = { registry: this.#registry, secrets: this.#secrets, since: this.#since };
    this.#registry = null;
    this.#secrets = [];
    this.#since = null;
    return changes;
  }

  #noteSince(at: number): void {
    if (this.#since === null || at < this.#since) this.#since = at;
  }
}
