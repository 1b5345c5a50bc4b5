// Connections that try to hold a listener open, as a flood of clients would: idle ones (one
// route request, then silence) and slow ones (part of a request, then a header line now and
// then, or nothing more), opened a few dozen at a time against 127.0.0.1.

import net from "node:net";
import { waitUntil } from "./wait.ts";

/** One connection of the flood, as the client saw it (times from `performance.now()`). */
export interface Opened {
  readonly kind: "idle" | "slow";
  connectedAt: number;
  answeredAt: number | null;
  status: number | null;
  closedAt: number | null;
}

export interface FloodOptions {
  readonly idle: number;
  readonly slow: number;
  /** The Host of the `i`-th connection's request. */
  readonly host: (i: number) => string;
  /** A slow connection sends a header line this often; undefined: nothing after its first part. */
  readonly trickleMs?: number;
}

export interface Flood {
  /** Every connection opened, idle and slow interleaved. */
  readonly opened: readonly Opened[];
  /** Resolves once every idle one is answered and every slow one sent its part (or closed). */
  settled(timeoutMs?: number): Promise<void>;
  /** How many of each kind the server has not closed. */
  open(): { idle: number; slow: number };
  /** Closes every connection still open. */
  stop(): void;
}

/** Opens `o.idle + o.slow` connections to 127.0.0.1:`port`, fifty every couple of milliseconds. */
export async function openFlood(port: number, o: FloodOptions): Promise<Flood> {
  const opened: Opened[] = [];
  const sockets: net.Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const open = (kind: Opened["kind"], host: string) => {
    const c: Opened = { kind, connectedAt: 0, answeredAt: null, status: null, closedAt: null };
    opened.push(c);
    const s = net.connect(port, "127.0.0.1");
    sockets.push(s);
    s.on("connect", () => {
      c.connectedAt = performance.now();
      if (kind === "idle") s.write(`GET /v1/route HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      else {
        s.write(`GET /v1/route HTTP/1.1\r\nHost: ${host}\r\n`);
        if (o.trickleMs === undefined) return;
        const t = setInterval(() => s.writable && s.write("x-slow: 1\r\n"), o.trickleMs);
        timers.push(t);
        s.on("close", () => clearInterval(t));
      }
    });
    s.on("data", (d: Buffer) => {
      if (c.answeredAt !== null) return;
      c.answeredAt = performance.now();
      c.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString("latin1"))?.[1] ?? 0);
    });
    s.on("error", () => {});
    s.on("close", () => {
      c.closedAt = performance.now();
    });
  };
  const total = o.idle + o.slow;
  const every = o.slow === 0 ? Infinity : Math.floor(total / o.slow);
  let slow = 0;
  for (let i = 0; i < total; i++) {
    const isSlow = (i % every === every - 1 || total - i <= o.slow - slow) && slow < o.slow;
    if (isSlow) slow++;
    open(isSlow ? "slow" : "idle", o.host(i));
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 2));
  }
  const count = (kind: Opened["kind"]) =>
    opened.filter((c) => c.kind === kind && c.closedAt === null).length;
  return {
    opened,
    async settled(timeoutMs = 10_000) {
      await waitUntil(
        () =>
          opened.every((c) =>
            c.kind === "idle"
              ? c.answeredAt !== null || c.closedAt !== null
              : c.connectedAt > 0 || c.closedAt !== null,
          ),
        { timeoutMs, intervalMs: 20, what: "the flood to be answered" },
      );
    },
    open: () => ({ idle: count("idle"), slow: count("slow") }),
    stop() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
    },
  };
}
