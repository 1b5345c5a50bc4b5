// Where a reflector stands with the API server: the resourceVersion its watch goes on from, and
// the one its next list asks for (client-go's lastSyncResourceVersion and its "unavailable" flag).

import type { ListMode } from "./reflector-status.ts";

/** The last synced resourceVersion, and whether the server could still serve it to a list. */
export class SyncPoint {
  /** The resourceVersion the next watch starts from ("" before the first list). */
  resourceVersion = "";
  #unavailable = false;

  /**
   * The resourceVersion of the next list, as client-go's reflector chooses it (ADR 16): for the
   * first, "0" for a paged list (any recent state, from the API server's watch cache) and "" for
   * a streaming one (the latest state, which the watch cache serves too); the last synced version
   * for a relist (not older than what was delivered); "" (the latest state, read consistently)
   * once a list at a version failed because the server could not serve it.
   */
  listFrom(mode: ListMode): string {
    if (this.#unavailable) return "";
    if (this.resourceVersion !== "") return this.resourceVersion;
    return mode === "list" ? "0" : "";
  }

  /**
   * A list that asked for `asked` failed as unservable (410, or a watch cache behind it). True
   * when the next list reads the latest state instead; false when it already asked for that.
   */
  unservable(asked: string): boolean {
    if (asked === "") return false;
    this.#unavailable = true;
    return true;
  }

  /** A complete list at resourceVersion: the watch goes on from it, and so does a relist. */
  listed(resourceVersion: string): void {
    this.resourceVersion = resourceVersion;
    this.#unavailable = false;
  }
}
