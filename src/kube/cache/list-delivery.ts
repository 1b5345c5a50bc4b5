// One complete list as the handler receives it, whichever way it arrived: the pages of a list or
// the initial events of a streaming list. Both hand items on as they come and reconcile at the
// end, so neither holds the list in memory and both replace the handler's state the same way.

import type { KnownVersions } from "./known-versions.ts";
import { type SecretObject, secretKey } from "./list-watch.ts";
import type { GuardedHandler } from "./reflector-handler.ts";

/**
 * Delivers one list: each item as it arrives (ADDED for a new key, MODIFIED for a changed
 * resourceVersion, nothing for a version the handler has), then, at finish(), DELETED for every
 * known key the list did not hold and `onListed`. Items handed on before a list failed stay handed
 * on; the next complete list reconciles them.
 */
export class ListDelivery {
  readonly #known: KnownVersions;
  readonly #handler: GuardedHandler;
  readonly #seen = new Set<string>();
  #complete = false;

  constructor(known: KnownVersions, handler: GuardedHandler) {
    this.#known = known;
    this.#handler = handler;
  }

  /** True once finish() ran: the list is complete. */
  get complete(): boolean {
    return this.#complete;
  }

  /** One object the list holds. */
  item(object: SecretObject): void {
    const key = secretKey(object.metadata);
    this.#seen.add(key);
    const type = this.#known.listed(object, key);
    if (type !== undefined) this.#handler.onEvent({ type, object });
  }

  /** An object deleted before the list ended: it is not part of the list. */
  removed(object: SecretObject): void {
    this.#seen.delete(secretKey(object.metadata));
  }

  /** Forgets what was seen: a list that starts over from its first page. */
  restart(): void {
    this.#seen.clear();
  }

  /** Delivers the deletions and `onListed`; returns how many objects the list held. */
  finish(resourceVersion: string): number {
    this.#complete = true;
    for (const gone of this.#known.removeAllBut(this.#seen))
      this.#handler.onEvent({ type: "DELETED", object: gone });
    this.#handler.onListed(this.#seen, resourceVersion);
    return this.#seen.size;
  }
}
