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
  /**
   * A reflector's first list, while it has not started over: everything known was listed by it,
   * so the known keys are what it held but for the objects `removed` before its end, and it keeps
   * no set of its own (100k keys at 100k Secrets, on the way to ready).
   */
  #first: boolean;
  readonly #seen = new Set<string>();
  /** In a first list: the keys removed and not listed again since. */
  readonly #removed = new Set<string>();
  #complete = false;

  constructor(known: KnownVersions, handler: GuardedHandler) {
    this.#known = known;
    this.#handler = handler;
    this.#first = known.size === 0;
  }

  /** True once finish() ran: the list is complete. */
  get complete(): boolean {
    return this.#complete;
  }

  /** One object the list holds. */
  item(object: SecretObject): void {
    // No key string on the way of a first list's items but for one removed before its end.
    if (!this.#first) this.#seen.add(secretKey(object.metadata));
    else if (this.#removed.size > 0) this.#removed.delete(secretKey(object.metadata));
    const type = this.#known.listed(object);
    if (type !== undefined) this.#handler.onEvent({ type, object });
  }

  /** An object deleted before the list ended: it is not part of the list. */
  removed(object: SecretObject): void {
    const key = secretKey(object.metadata);
    if (this.#first) this.#removed.add(key);
    else this.#seen.delete(key);
  }

  /** Forgets what was seen: a list that starts over from its first page. */
  restart(): void {
    // What the pages before held is known and may be gone: from here, only what is seen counts.
    this.#first = false;
    this.#removed.clear();
    this.#seen.clear();
  }

  /** Delivers the deletions and `onListed`; returns how many objects the list held. */
  finish(resourceVersion: string): number {
    this.#complete = true;
    const gone = this.#first
      ? this.#known.remove(this.#removed)
      : this.#known.removeAllBut(this.#seen);
    for (const object of gone) this.#handler.onEvent({ type: "DELETED", object });
    const held = this.#first ? this.#known : this.#seen;
    this.#handler.onListed(held, resourceVersion);
    return held.size;
  }
}
