/**
 * The record of the requests the server received, so tests can assert what a client did and a
 * benchmark can count what a fleet of clients cost. Entries are kept up to a cap; the totals in
 * `summary()` count every request whatever the cap, in memory that does not grow with the load.
 */
import type { ListRead } from "./list.ts";
import {
  countEnded,
  countListed,
  countSent,
  countStreamedList,
  countWatchError,
  type RequestSummary,
  type Resource,
  type TallyPair,
  Totals,
} from "./request-totals.ts";
import type { Verb } from "./routes.ts";

/** One request; `verb` classifies it as the API server's RequestInfo would. */
export interface RequestLogEntry {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly verb: Verb;
  readonly resource?: Resource;
  readonly namespace?: string;
  readonly name?: string;
  /** Who sent it: the client its `clientToken` names, else its User-Agent, else "unknown". */
  readonly client: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** The resourceVersion and limit asked for, as sent. */
  readonly resourceVersion?: string;
  readonly limit?: string;
  /** Lists that were served: whether from the watch cache, consistently, or at an exact version. */
  readonly listRead?: ListRead;
  /** The response code, once the response head has been written. */
  readonly status?: number;
  /** API objects sent so far: list items, watch events, one per get or write. */
  readonly objects: number;
  /** Response body bytes sent so far (a watch: every event written until now). */
  readonly bytes: number;
  /** Milliseconds since the epoch when the request arrived. */
  readonly time: number;
  /** Set once the response has ended (a watch: when it closed). */
  readonly durationMs?: number;
  /**
   * A watch that ended with an ERROR event (HTTP 200, as the watch cache answers): the code of the
   * Status it carried, such as 410 for a resume from a resourceVersion older than the history.
   */
  readonly watchError?: number;
  readonly userAgent?: string;
  readonly contentType?: string;
}

/** What a request is known by when it arrives. */
export type RequestArrival = Omit<
  RequestLogEntry,
  "status" | "objects" | "bytes" | "time" | "durationMs" | "listRead" | "watchError"
>;

/** What tests and benchmarks read; `clear()` starts a new phase for both entries and totals. */
export interface RequestLog {
  /** The kept entries in arrival order (the most recent ones when more arrived than are kept). */
  entries(): readonly RequestLogEntry[];
  /** Totals per verb and per client, requests per second, and lists in flight. */
  summary(): RequestSummary;
  /** Forgets entries and totals; requests still open count their later bytes in the new phase. */
  clear(): void;
}

/** How much the log keeps. */
export interface RequestLogOptions {
  /** Entries kept for `entries()` (default 10 000; 0 keeps none, totals still count). */
  readonly keep?: number;
  /** Seconds of requests-per-second history in `summary()` (default 3600). */
  readonly seriesSeconds?: number;
  /** The clock, in milliseconds since the epoch. */
  readonly now?: () => number;
}

/** One request being served: what the handlers and the watch report its progress to. */
export class RequestRecord {
  readonly #log: RequestRecorder;
  readonly #arrival: RequestArrival;
  readonly #time: number;
  #tallies: TallyPair;
  #phase: number;
  #objects = 0;
  #bytes = 0;
  #listRead: ListRead | undefined;
  #watchError: number | undefined;
  #status: number | undefined;
  #durationMs: number | undefined;
  /** Reads the status while the response is open; dropped at the end so no response is kept. */
  #liveStatus: (() => number | undefined) | undefined;

  constructor(
    log: RequestRecorder,
    arrival: RequestArrival,
    time: number,
    phase: number,
    liveStatus: () => number | undefined,
  ) {
    this.#log = log;
    this.#liveStatus = liveStatus;
    this.#arrival = arrival;
    this.#time = time;
    this.#phase = phase;
    this.#tallies = log.tallies(arrival.client, arrival.verb, arrival.resource);
  }

  /** The request's verb. */
  get verb(): Verb {
    return this.#arrival.verb;
  }

  /** Whether the response has ended. */
  get ended(): boolean {
    return this.#durationMs !== undefined;
  }

  /** Adds objects and body bytes written to the client. */
  sent(objects: number, bytes: number): void {
    this.#objects += objects;
    this.#bytes += bytes;
    countSent(this.#current(), objects, bytes);
  }

  /** Records how a list was read (once, when it is served). */
  listed(read: ListRead): void {
    this.#listRead = read;
    countListed(this.#current(), read);
  }

  /** The watch is a streaming list: its initial events were queued (once, as it opens). */
  streamedList(): void {
    countStreamedList(this.#current());
  }

  /** The watch sent an ERROR event carrying a Status with `code` (once, as it then ends). */
  watchError(code: number): void {
    this.#watchError = code;
    countWatchError(this.#current(), code);
  }

  /** The response ended with `status` (undefined: the connection closed before any answer). */
  end(status: number | undefined): void {
    if (this.ended) return;
    this.#status = status;
    this.#liveStatus = undefined;
    this.#durationMs = Math.max(0, this.#log.now() - this.#time);
    countEnded(this.#current(), status ?? 0, this.#durationMs);
    this.#log.ended(this);
  }

  /** A copy of the entry as it stands. */
  entry(): RequestLogEntry {
    const status = this.#status ?? this.#liveStatus?.();
    return {
      ...this.#arrival,
      ...(this.#listRead === undefined ? {} : { listRead: this.#listRead }),
      ...(status === undefined ? {} : { status }),
      objects: this.#objects,
      bytes: this.#bytes,
      time: this.#time,
      ...(this.#durationMs === undefined ? {} : { durationMs: this.#durationMs }),
      ...(this.#watchError === undefined ? {} : { watchError: this.#watchError }),
    };
  }

  #current(): TallyPair {
    if (this.#phase !== this.#log.phase) {
      this.#phase = this.#log.phase;
      this.#tallies = this.#log.tallies(
        this.#arrival.client,
        this.#arrival.verb,
        this.#arrival.resource,
      );
    }
    return this.#tallies;
  }
}

/** The server's log. Control-path requests are not recorded: they are the test talking. */
export class RequestRecorder implements RequestLog {
  readonly now: () => number;
  readonly #keep: number;
  readonly #seriesSeconds: number;
  #ring: (RequestRecord | undefined)[] = [];
  #next = 0;
  #dropped = 0;
  #totals: Totals;
  #phase = 0;
  #listsInFlight = 0;

  constructor(options: RequestLogOptions = {}) {
    this.now = options.now ?? Date.now;
    this.#keep = Math.max(0, options.keep ?? 10_000);
    this.#seriesSeconds = Math.max(1, options.seriesSeconds ?? 3600);
    this.#totals = new Totals(this.now(), this.#seriesSeconds);
  }

  /** Counts changes phase on clear; records compare it to find the current tallies. */
  get phase(): number {
    return this.#phase;
  }

  /**
   * Records a request's arrival; the caller reports its progress and end to the record, and
   * `liveStatus` tells the status once the response head is written and until the end.
   */
  start(arrival: RequestArrival, liveStatus: () => number | undefined): RequestRecord {
    const time = this.now();
    const record = new RequestRecord(this, arrival, time, this.#phase, liveStatus);
    const tallies = this.tallies(arrival.client, arrival.verb, arrival.resource);
    this.#totals.arrived(tallies, arrival.verb, time);
    if (arrival.verb === "list") {
      this.#listsInFlight += 1;
      this.#totals.peakListsInFlight = Math.max(
        this.#totals.peakListsInFlight,
        this.#listsInFlight,
      );
    }
    if (this.#keep > 0) {
      if (this.#ring.length < this.#keep) this.#ring.push(record);
      else {
        this.#ring[this.#next] = record;
        this.#next = (this.#next + 1) % this.#keep;
        this.#dropped += 1;
      }
    } else this.#dropped += 1;
    return record;
  }

  /** The current phase's tallies for a client, verb and resource. */
  tallies(client: string, verb: Verb, resource: Resource | undefined): TallyPair {
    return this.#totals.tallies(client, verb, resource);
  }

  /** Called by a record when its response ends. */
  ended(record: RequestRecord): void {
    if (record.verb === "list") this.#listsInFlight = Math.max(0, this.#listsInFlight - 1);
  }

  /** See RequestLog.entries. */
  entries(): readonly RequestLogEntry[] {
    const ordered = [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
    return ordered.flatMap((r) => (r === undefined ? [] : [r.entry()]));
  }

  /** See RequestLog.summary. */
  summary(): RequestSummary {
    return this.#totals.summary(this.#listsInFlight, this.#dropped);
  }

  /** See RequestLog.clear. */
  clear(): void {
    this.#ring = [];
    this.#next = 0;
    this.#dropped = 0;
    this.#phase += 1;
    this.#totals = new Totals(this.now(), this.#seriesSeconds);
  }
}
