/**
 * One open watch: a chunked HTTP response fed newline-delimited JSON events in commit order. Events
 * for objects entering or leaving the watcher's selection become ADDED or DELETED, as the real
 * watch cache sends them. Lines are queued and written by a pump, which is where stalls and
 * chunking faults act.
 */
import type { ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { coalesceCount, splitRandomly } from "./chunking.ts";
import type { FaultSettings } from "./faults.ts";
import type { EventType, StoreEvent } from "./history.ts";
import { bookmarkFrame, encodeStatus, PROTOBUF_MEDIA_TYPE, watchFrame } from "./protobuf-encode.ts";
import type { RequestRecord } from "./request-log.ts";
import type { Predicate } from "./selectors.ts";
import type { Status } from "./status.ts";

/**
 * A slow reader whose unsent backlog passes this is disconnected (cleanly), as the cacher drops
 * unresponsive watchers.
 */
const MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * The most bytes of lines one write takes; the next waits until the socket drained. A streaming
 * list's initial events (90 MiB for 50,000 Secrets of 1 KiB) then cost the server what one write
 * holds, not a copy of them all per watcher, as kube-apiserver's watch cache streams them from
 * memory it keeps anyway.
 */
const WRITE_BYTES = 256 * 1024;

function bookmarkLine(rv: number, initialEventsEnd: boolean): Buffer {
  const end = initialEventsEnd ? `,"annotations":{"k8s.io/initial-events-end":"true"}` : "";
  const meta = `{"resourceVersion":"${rv}","creationTimestamp":null${end}}`;
  return Buffer.from(
    `{"type":"BOOKMARK","object":{"kind":"Secret","apiVersion":"v1","metadata":${meta}}}\n`,
  );
}

const TYPE_KEY = Buffer.from('{"type":"');
const EVENT_INITIALS = new Set(["A", "M", "D"].map((c) => c.charCodeAt(0)));

/** A protobuf frame's WatchEvent starts with its type: field 1's tag, a one-byte length, the text. */
const TYPE_TAG = 0x0a;
const FRAME_HEAD = 4;

/**
 * How many of `lines` are events carrying an object (ADDED, MODIFIED, DELETED), as opposed to
 * BOOKMARK, ERROR or injected garbage: read from the line (or protobuf frame) itself, so the queue
 * stays plain buffers.
 */
function eventsIn(lines: readonly Buffer[]): number {
  let n = 0;
  for (const l of lines) {
    if (
      EVENT_INITIALS.has(l[TYPE_KEY.length] ?? 0) &&
      l.subarray(0, TYPE_KEY.length).equals(TYPE_KEY)
    )
      n++;
    else if (l[FRAME_HEAD] === TYPE_TAG && EVENT_INITIALS.has(l[FRAME_HEAD + 2] ?? 0)) n++;
  }
  return n;
}

/** How a watch writes its events: JSON lines, or protobuf frames (`;stream=watch`). */
export type WatchEncoding = "json" | "protobuf";

/** Starts a watch response: 200, chunked, headers flushed before any event. */
export function startWatchResponse(res: ServerResponse, encoding: WatchEncoding = "json"): void {
  res.writeHead(200, {
    // kube-apiserver's watch handler names the framing for any stream but JSON.
    "Content-Type":
      encoding === "protobuf" ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : "application/json",
    "Cache-Control": "no-cache, private",
    "Transfer-Encoding": "chunked",
  });
  res.flushHeaders();
}

/** Encodes a store event as the line a watcher sees; the default is `e.line(as)`. */
export type EventEncoder = (e: StoreEvent, as: EventType) => Buffer;

/**
 * What a watch connection needs: its response and request record, its selection and encoding, and
 * the shared fault switches.
 */
interface WatchConnectionOptions {
  readonly res: ServerResponse;
  readonly record: RequestRecord;
  readonly encode: EventEncoder;
  readonly matches: Predicate;
  readonly bookmarks: boolean;
  readonly encoding: WatchEncoding;
  readonly faults: FaultSettings;
  readonly random: () => number;
  /** Runs a flush in the hub's next write batch. */
  readonly schedule: (flush: () => void) => void;
  readonly onClose: (s: WatchConnection) => void;
}

/**
 * One watch connection. Contract: lines are written in the order they were queued, or not at all
 * (drop).
 */
export class WatchConnection {
  readonly bookmarks: boolean;
  readonly #res: ServerResponse;
  readonly #record: RequestRecord;
  readonly #matches: Predicate;
  readonly #encode: EventEncoder;
  readonly #encoding: WatchEncoding;
  readonly #faults: FaultSettings;
  readonly #random: () => number;
  readonly #schedule: (flush: () => void) => void;
  readonly #serial: number;
  #queue: Buffer[] = [];
  #scheduled = false;
  #pumping = false;
  #ending = false;
  #closed = false;
  #lastRv = 0;
  #startRv = 0;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(o: WatchConnectionOptions) {
    this.#res = o.res;
    this.#record = o.record;
    this.#matches = o.matches;
    this.#encode = o.encode;
    this.#encoding = o.encoding;
    this.bookmarks = o.bookmarks;
    this.#faults = o.faults;
    this.#serial = o.faults.nextWatchSerial();
    this.#random = o.random;
    this.#schedule = o.schedule;
    o.res.on("close", () => {
      this.#closed = true;
      this.#queue = [];
      for (const t of this.#timers) clearTimeout(t);
      o.onClose(this);
    });
  }

  /** Whether the connection is gone (ended, dropped or closed by the client). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Events at or below `rv` are not sent: a watch from a future resourceVersion waits for it, as
   * the watch cache does.
   */
  startAfter(rv: number): void {
    this.#startRv = rv;
  }

  /** Queues the line this watcher sees for a store event, if any. */
  offer(e: StoreEvent): void {
    if (this.#closed || this.#ending || e.rv <= this.#startRv) return;
    const now = e.current !== undefined && this.#matches(e.current.obj);
    const before = e.prev !== undefined && this.#matches(e.prev.obj);
    let as: EventType | undefined;
    if (now) as = before ? "MODIFIED" : "ADDED";
    else if (before) as = "DELETED";
    this.#lastRv = e.rv;
    if (as !== undefined) this.push(this.#encode(e, as));
  }

  /** Queues a raw line (initial ADDED events, garbage). */
  push(line: Buffer): void {
    if (this.#closed || this.#ending) return;
    this.#queue.push(line);
    this.kick();
  }

  /** Queues a BOOKMARK at `rv` (never older than an event already queued). */
  bookmark(rv: number, initialEventsEnd = false): void {
    if (!this.bookmarks) return;
    const at = Math.max(rv, this.#lastRv);
    this.push(
      this.#encoding === "protobuf"
        ? bookmarkFrame(at, initialEventsEnd)
        : bookmarkLine(at, initialEventsEnd),
    );
  }

  /** Writes the ERROR event carrying `status` and ends the watch; the log records its code. */
  fail(status: Status): void {
    if (!this.#closed && !this.#ending) this.#record.watchError(status.code);
    this.push(
      this.#encoding === "protobuf"
        ? watchFrame("ERROR", "Status", encodeStatus(status))
        : Buffer.from(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`),
    );
    this.end();
  }

  /**
   * Ends the watch cleanly once queued lines are written; `timeoutSeconds` sends a last bookmark
   * first.
   */
  endAfter(ms: number, currentRv: () => number): void {
    const t = setTimeout(() => {
      this.bookmark(currentRv());
      this.end();
    }, ms);
    this.#timers.push(t);
  }

  /** Ends the watch cleanly once the queued lines are written. */
  end(): void {
    if (this.#closed) return;
    this.#ending = true;
    this.kick();
  }

  /** Abrupt disconnect: the socket is destroyed, queued lines are lost. */
  destroy(): void {
    this.#closed = true;
    this.#queue = [];
    this.#res.socket?.destroy();
    this.#res.destroy();
  }

  /** Schedules the pump (after unstall or a chunking change, or for new lines). */
  kick(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    this.#schedule(this.#flush);
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    void this.#pump();
  };

  /**
   * Writes `buf`, accounting its bytes and the `objects` (events) it completes; whether the socket
   * takes more before it drains.
   */
  #write(buf: Buffer, objects: number): boolean {
    if (this.#closed) return true;
    this.#record.sent(objects, buf.length);
    const more = this.#res.write(buf);
    if (this.#res.writableLength > MAX_BACKLOG_BYTES) {
      this.#queue = [];
      this.#ending = true;
    }
    return more;
  }

  /** Resolves when the response drained, or closed. */
  #drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#res.off("drain", done);
        this.#res.off("close", done);
        resolve();
      };
      this.#res.on("drain", done);
      this.#res.on("close", done);
    });
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (!this.#closed && !this.#faults.holds(this.#serial)) {
        if (this.#queue.length === 0) {
          if (this.#ending) {
            this.#closed = true;
            this.#res.end();
          }
          return;
        }
        const mode = this.#faults.chunkingMode;
        if (mode === "split") {
          const line = this.#queue.shift() ?? Buffer.alloc(0);
          const pieces = splitRandomly(line, this.#random);
          for (const [i, piece] of pieces.entries()) {
            if (this.#closed) return;
            this.#write(piece, i === pieces.length - 1 ? eventsIn([line]) : 0);
            await delay(1);
          }
        } else if (mode === "coalesce") {
          const n = coalesceCount(this.#random);
          if (this.#queue.length < n && !this.#ending) await delay(5);
          const lines = this.#queue.splice(0, n);
          this.#write(Buffer.concat(lines), eventsIn(lines));
        } else {
          let count = 0;
          for (let bytes = 0; count < this.#queue.length && bytes < WRITE_BYTES; count++)
            bytes += this.#queue[count]!.length;
          const lines = this.#queue.splice(0, count);
          const buf = lines.length === 1 ? (lines[0] ?? Buffer.alloc(0)) : Buffer.concat(lines);
          if (!this.#write(buf, eventsIn(lines))) await this.#drained();
        }
      }
    } finally {
      this.#pumping = false;
    }
  }
}
