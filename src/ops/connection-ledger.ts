// The ops listener's open connections, and which one gives way when one more arrives at the cap
// (ADR 47). Node's own `server.maxConnections` closes the newcomer, so whoever holds the cap with
// idle or half-sent connections keeps the kubelet's probes out; here the newcomer always gets in
// and the connection that has waited longest without a request in flight is closed instead.

/**
 * Connections by state, each in the order it entered that state: `waiting` (accepted, or done
 * with its last request, and no request in flight: idle kept-alive connections and ones whose
 * headers have not all arrived alike) and `busy` (a request in flight). Pure: it decides, the
 * caller closes.
 */
export class ConnectionLedger<K> {
  readonly #cap: number;
  readonly #waiting = new Set<K>();
  /** Requests in flight on each busy connection (pipelined requests count each). */
  readonly #busy = new Map<K, number>();

  /** `cap`: the most connections held at once, at least 1. */
  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be at least 1: ${cap}`);
    this.#cap = cap;
  }

  /**
   * Records a new connection and returns the one to close so that at most `cap` stay open: the
   * one waiting longest, else (every other one busy) the one busy longest; undefined under the
   * cap. The returned connection is forgotten at once.
   */
  open(key: K): K | undefined {
    this.#waiting.add(key);
    if (this.size <= this.#cap) return undefined;
    const victim = first(this.#waiting, key) ?? first(this.#busy.keys(), key);
    if (victim !== undefined) this.closed(victim);
    return victim;
  }

  /** A request began on `key`: it stops waiting. Unknown keys (already closed) are ignored. */
  requestStarted(key: K): void {
    const inFlight = this.#busy.get(key);
    if (inFlight !== undefined) this.#busy.set(key, inFlight + 1);
    else if (this.#waiting.delete(key)) this.#busy.set(key, 1);
  }

  /** A request on `key` ended (answered or aborted); with none left in flight it waits again, last in line. */
  requestEnded(key: K): void {
    const inFlight = this.#busy.get(key);
    if (inFlight === undefined) return;
    if (inFlight > 1) {
      this.#busy.set(key, inFlight - 1);
      return;
    }
    this.#busy.delete(key);
    this.#waiting.add(key);
  }

  /** `key` closed; closing twice, or a key never opened, is harmless. */
  closed(key: K): void {
    this.#waiting.delete(key);
    this.#busy.delete(key);
  }

  /** Connections held. */
  get size(): number {
    return this.#waiting.size + this.#busy.size;
  }

  /** The connections in the order they would give way: waiting ones first. */
  order(): { readonly waiting: K[]; readonly busy: K[] } {
    return { waiting: [...this.#waiting], busy: [...this.#busy.keys()] };
  }
}

/** The first of `keys` other than `except`. */
function first<K>(keys: Iterable<K>, except: K): K | undefined {
  for (const k of keys) if (k !== except) return k;
  return undefined;
}
