import type { Snapshot } from "./types.ts";

/**
 * Holds the Snapshot being served. Readers take `current()` once per request: a single field read,
 * no lock and no await, so a request sees one whole Snapshot. Writers replace it with `swap`.
 */
export class SnapshotHolder {
  #current: Snapshot | null = null;

  /** The Snapshot being served; null until the first one is published. */
  current(): Snapshot | null {
    return this.#current;
  }

  /** Publishes `next` unless it is not newer than the current one: an older result never wins. */
  swap(next: Snapshot): boolean {
    if (this.#current !== null && next.revision <= this.#current.revision) return false;
    this.#current = next;
    return true;
  }
}
