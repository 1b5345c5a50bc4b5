// Which connection a listener at its cap closes so that a new one gets in (ADR 49).
//
// A connection is idle between requests: from the end of an answer (or from its accept, when it
// has sent nothing yet) to the first byte of its next request. The first to go is the one idle
// the longest. A connection in the middle of a request (part of one sent: slow headers, a body
// still coming) is not idle; the headers and request timeouts bound it, and it goes only when no
// connection is idle, the one found in the middle of its request the earliest first.
//
// The hot path (`answered`) moves a connection to the end of a linked list and reads its bytes
// received: no timer, no allocation, no clock. Whether a connection sent anything since it went
// idle is asked only when one must go, by comparing those bytes with its mark; each connection
// found busy then waits aside until its next answer, so over time the search costs at most one
// step per answer or accept.

/** A connection's place in the order: given by `EvictionOrder.add`, owned by the order. */
export class Place<C> {
  readonly connection: C;
  /** Bytes the connection had received when it last went idle. */
  mark: number;
  line: Line<C> | null = null;
  prev: Place<C> | null = null;
  next: Place<C> | null = null;

  constructor(connection: C, mark: number) {
    this.connection = connection;
    this.mark = mark;
  }
}

/** A doubly linked list of places, oldest first. */
class Line<C> {
  first: Place<C> | null = null;
  last: Place<C> | null = null;

  append(p: Place<C>): void {
    p.line = this;
    p.prev = this.last;
    p.next = null;
    if (this.last === null) this.first = p;
    else this.last.next = p;
    this.last = p;
  }
}

/** Takes `p` out of its line, if it is in one. */
function unlink<C>(p: Place<C>): void {
  const line = p.line;
  if (line === null) return;
  if (p.prev === null) line.first = p.next;
  else p.prev.next = p.next;
  if (p.next === null) line.last = p.prev;
  else p.next.prev = p.prev;
  p.line = null;
  p.prev = null;
  p.next = null;
}

/** The connection to close, and whether it was idle (else: in the middle of a request). */
export interface Evicted<C> {
  readonly connection: C;
  readonly idle: boolean;
}

/** The connections of one listener, in the order they would be closed to make room. */
export class EvictionOrder<C> {
  readonly #received: (connection: C) => number;
  /** Idle since their mark as far as known, longest first; some may have sent bytes since. */
  readonly #idle = new Line<C>();
  /** Found in the middle of a request, earliest found first. */
  readonly #busy = new Line<C>();
  #size = 0;

  /** `received(c)`: the bytes connection `c` has received so far (it never decreases). */
  constructor(received: (connection: C) => number) {
    this.#received = received;
  }

  /** How many connections it holds. */
  get size(): number {
    return this.#size;
  }

  /** Holds a connection just accepted: idle from now, the most recently idle. */
  add(connection: C): Place<C> {
    const p = new Place(connection, this.#received(connection));
    this.#idle.append(p);
    this.#size++;
    return p;
  }

  /** The connection at `p` finished an answer: idle from now, the most recently idle. */
  answered(p: Place<C>): void {
    if (p.line === null) return;
    p.mark = this.#received(p.connection);
    unlink(p);
    this.#idle.append(p);
  }

  /** Forgets the connection at `p` (it closed); nothing if it was already taken out. */
  remove(p: Place<C>): void {
    if (p.line === null) return;
    unlink(p);
    this.#size--;
  }

  /**
   * Takes out the connection to close: the one idle the longest; when none is idle, the one
   * found in the middle of its request the earliest. Null when it holds none.
   */
  evict(): Evicted<C> | null {
    for (let p = this.#idle.first; p !== null; p = this.#idle.first) {
      unlink(p);
      if (this.#received(p.connection) === p.mark) return this.#taken(p, true);
      this.#busy.append(p);
    }
    const p = this.#busy.first;
    if (p === null) return null;
    unlink(p);
    return this.#taken(p, false);
  }

  #taken(p: Place<C>, idle: boolean): Evicted<C> {
    this.#size--;
    return { connection: p.connection, idle };
  }
}
