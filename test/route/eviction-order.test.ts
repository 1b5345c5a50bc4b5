import { describe, expect, it } from "vitest";
import { type Evicted, EvictionOrder, type Place } from "../../src/route/eviction-order.ts";

/** A connection as the order sees it: the bytes it has received. */
interface Conn {
  readonly name: string;
  received: number;
}

/** An order over named connections, and the steps a test takes on it. */
function held() {
  const order = new EvictionOrder<Conn>((c) => c.received);
  const places = new Map<string, Place<Conn>>();
  const conns = new Map<string, Conn>();
  return {
    order,
    /** Accepts connections, in this order. */
    accept(...names: string[]) {
      for (const name of names) {
        const c = { name, received: 0 };
        conns.set(name, c);
        places.set(name, order.add(c));
      }
    },
    /** `name` receives bytes: a request begun (or part of one). */
    send(name: string, bytes = 10) {
      conns.get(name)!.received += bytes;
    },
    /** A whole request on `name`, then its answer. */
    route(...names: string[]) {
      for (const name of names) {
        conns.get(name)!.received += 40;
        order.answered(places.get(name)!);
      }
    },
    close(name: string) {
      order.remove(places.get(name)!);
    },
    /** The next `n` evictions, by name. */
    evict(n: number) {
      return Array.from({ length: n }, () => {
        const e: Evicted<Conn> | null = order.evict();
        return e === null ? null : { name: e.connection.name, idle: e.idle };
      });
    },
  };
}

describe("EvictionOrder", () => {
  it("closes the longest-idle connection first, counting one silent since its accept as idle since then", () => {
    const h = held();
    h.accept("a", "b", "c", "d");
    h.route("c", "a");
    // Idle since: b (accept), d (accept), c (answer), a (answer).
    expect({ evicted: h.evict(5), size: h.order.size }).toEqual({
      evicted: [
        { name: "b", idle: true },
        { name: "d", idle: true },
        { name: "c", idle: true },
        { name: "a", idle: true },
        null,
      ],
      size: 0,
    });
  });

  it("keeps a connection in the middle of a request while any is idle, and restores it once answered", () => {
    const h = held();
    h.accept("slow", "mid", "idle", "later");
    h.route("mid", "idle", "later");
    h.send("slow");
    h.send("mid");
    const first = h.evict(1);
    // `mid` is answered: idle again, the most recently.
    h.route("mid");
    expect({ first, after: h.evict(2), size: h.order.size }).toEqual({
      first: [{ name: "idle", idle: true }],
      after: [
        { name: "later", idle: true },
        { name: "mid", idle: true },
      ],
      size: 1,
    });
  });

  it("when none is idle, closes the one found in the middle of its request the earliest", () => {
    const h = held();
    h.accept("a", "b", "c");
    h.send("b");
    h.send("a");
    h.send("c");
    // Found busy in their idle order: a, b, c; a goes.
    const first = h.evict(1);
    // d arrives idle and then sends part of a request: found busy after b and c.
    h.accept("d");
    h.send("d");
    expect({ first, after: h.evict(4) }).toEqual({
      first: [{ name: "a", idle: false }],
      after: [
        { name: "b", idle: false },
        { name: "c", idle: false },
        { name: "d", idle: false },
        null,
      ],
    });
  });

  it("forgets closed connections, evicted or not, and ignores an answer on one", () => {
    const h = held();
    h.accept("a", "b", "c");
    h.close("a");
    const evicted = h.evict(1);
    h.close("b");
    h.close("a");
    h.route("a", "b");
    expect({ evicted, size: h.order.size, rest: h.evict(2) }).toEqual({
      evicted: [{ name: "b", idle: true }],
      size: 1,
      rest: [{ name: "c", idle: true }, null],
    });
  });

  it("looks at a busy connection once per answer, however many evictions follow", () => {
    let reads = 0;
    const order = new EvictionOrder<Conn>((c) => {
      reads++;
      return c.received;
    });
    const slow = Array.from({ length: 100 }, (_, i) => ({ name: `slow-${i}`, received: 0 }));
    for (const c of slow) order.add(c);
    for (const c of slow) c.received = 5;
    const fresh = Array.from({ length: 100 }, (_, i) => ({ name: `fresh-${i}`, received: 0 }));
    reads = 0;
    // Each newcomer takes the place of the one before it: the slow ones are looked at once.
    const evicted = fresh.map((c) => {
      const e = order.evict();
      order.add(c);
      return e?.connection.name;
    });
    expect({ first: evicted.slice(0, 2), reads }).toEqual({
      first: ["slow-0", "fresh-0"],
      // 100 slow ones, then one idle one per eviction after the first, and one per add.
      reads: 100 + 99 + 100,
    });
  });
});
