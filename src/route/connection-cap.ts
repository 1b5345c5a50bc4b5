// The data listener's cap on open connections (ADR 49): at the cap a new connection closes the
// longest-idle one (`EvictionOrder`) instead of being refused, so the data plane's connections get
// in however many others are held open. Node's own `server.maxConnections` would close the
// newcomer instead; it stays unset, and nothing is refused at accept.

import type { Server } from "node:http";
import type { Socket } from "node:net";
import { EvictionOrder, type Place } from "./eviction-order.ts";

const PLACE = Symbol("eviction order place");
type Held = Socket & { [PLACE]?: Place<Socket> };

const bytesRead = (socket: Socket): number => socket.bytesRead;

/**
 * Caps `server` at `max` connections open at once: each connection accepted at the cap closes one
 * held, reported to `evicted` (`idle` false: it was in the middle of a request). Returns what the
 * request handler calls once it has answered on `socket` (the hot path: a few field writes).
 */
export function capConnections(
  server: Server,
  max: number,
  evicted: (idle: boolean) => void,
): (socket: Socket) => void {
  const order = new EvictionOrder<Socket>(bytesRead);
  function closed(this: Held): void {
    const p = this[PLACE];
    if (p !== undefined) order.remove(p);
  }
  // Ahead of Node's own listener, so that every socket has its place from the first time Node's
  // HTTP code sees it: one object shape for the inline caches of the data path (ADR 27).
  server.prependListener("connection", (socket: Held) => {
    if (order.size >= max) {
      const e = order.evict();
      if (e !== null) {
        e.connection.destroy();
        evicted(e.idle);
      }
    }
    socket[PLACE] = order.add(socket);
    socket.on("close", closed);
  });
  return (socket: Held) => {
    const p = socket[PLACE];
    if (p !== undefined) order.answered(p);
  };
}
