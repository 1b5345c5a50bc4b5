/**
 * Request accounting that stays small whatever the load: totals per verb and per client and verb,
 * requests per second over a bounded window, and lists in flight. Memory grows with the number of
 * distinct clients and verbs, never with the number of requests or watch events.
 */
import type { ListRead } from "./list.ts";
import type { Verb } from "./routes.ts";

/** What a set of requests added up to. */
export interface RequestTotals {
  readonly requests: number;
  /** API objects sent: list items, watch events, one per get or write. */
  readonly objects: number;
  /** Response body bytes, a watch's counted as its events are written. */
  readonly bytes: number;
  /** Responses by status code; "0" counts connections that closed before any answer. */
  readonly statuses: Readonly<Record<string, number>>;
  /** The durations of the requests that ended, added up. */
  readonly durationMs: number;
  /** Lists only: how many were read from the watch cache, consistently, or at an exact version. */
  readonly listReads: Readonly<Partial<Record<ListRead, number>>>;
  /**
   * Watches only, present once one ended with an ERROR event: how many did, by the code of the
   * Status it carried (410 for a resume the history no longer holds).
   */
  readonly watchErrors?: Readonly<Record<string, number>>;
  /**
   * Watches only, present once one was a streaming list (`sendInitialEvents=true`, served): how
   * many were. Their initial events count among `objects` and `bytes`.
   */
  readonly streamedLists?: number;
}

/** The resources the server serves, as `RequestLogEntry.resource` names them. */
export type Resource = "secrets" | "namespaces";

/** The requests that arrived in one second. */
export interface SecondCount {
  /** Seconds since the epoch. */
  readonly second: number;
  readonly requests: number;
  readonly byVerb: Readonly<Partial<Record<Verb, number>>>;
}

/** Everything the log counted since it started or was last cleared. */
export interface RequestSummary {
  /** Milliseconds since the epoch when counting started. */
  readonly since: number;
  readonly byVerb: Readonly<Partial<Record<Verb, RequestTotals>>>;
  /** Per resource, per verb: `byResource.secrets.list` counts the lists of Secrets alone. */
  readonly byResource: Readonly<
    Partial<Record<Resource, Readonly<Partial<Record<Verb, RequestTotals>>>>>
  >;
  /** Per client (see `clientToken`), per verb. */
  readonly byClient: Readonly<Record<string, Readonly<Partial<Record<Verb, RequestTotals>>>>>;
  /** One entry per second from the first request counted to the last, oldest first, bounded. */
  readonly perSecond: readonly SecondCount[];
  readonly listsInFlight: number;
  /** The most lists that were being served at once. */
  readonly peakListsInFlight: number;
  /** Requests no longer in `entries()` because the cap on kept entries was reached. */
  readonly entriesDropped: number;
}

/** A mutable RequestTotals; summaries hand out copies. */
export class Tally {
  requests = 0;
  objects = 0;
  bytes = 0;
  durationMs = 0;
  readonly statuses = new Map<number, number>();
  readonly listReads = new Map<ListRead, number>();
  readonly watchErrors = new Map<number, number>();
  streamedLists = 0;

  /** A copy that later counting does not change. */
  freeze(): RequestTotals {
    return {
      requests: this.requests,
      objects: this.objects,
      bytes: this.bytes,
      statuses: Object.fromEntries(this.statuses),
      durationMs: this.durationMs,
      listReads: Object.fromEntries(this.listReads),
      ...(this.watchErrors.size === 0 ? {} : { watchErrors: Object.fromEntries(this.watchErrors) }),
      ...(this.streamedLists === 0 ? {} : { streamedLists: this.streamedLists }),
    };
  }
}

function bump<K>(m: Map<K, number>, k: K, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}

/** The tallies one request adds to: its verb's, its client's verb's and its resource's verb's. */
export interface TallyPair {
  readonly verb: Tally;
  readonly client: Tally;
  /** Absent for requests on no resource (discovery, health). */
  readonly resource?: Tally;
}

/** Every tally of t. */
const each = (t: TallyPair): Tally[] =>
  t.resource === undefined ? [t.verb, t.client] : [t.verb, t.client, t.resource];

/** Adds objects and body bytes a request sent. */
export function countSent(t: TallyPair, objects: number, bytes: number): void {
  for (const x of each(t)) {
    x.objects += objects;
    x.bytes += bytes;
  }
}

/** Counts how a list was read. */
export function countListed(t: TallyPair, read: ListRead): void {
  for (const x of each(t)) bump(x.listReads, read);
}

/** Counts a watch served as a streaming list. */
export function countStreamedList(t: TallyPair): void {
  for (const x of each(t)) x.streamedLists += 1;
}

/** Counts a watch that ended with an ERROR event carrying a Status with `code`. */
export function countWatchError(t: TallyPair, code: number): void {
  for (const x of each(t)) bump(x.watchErrors, code);
}

/** Counts a request's end: its status (0: none was sent) and duration. */
export function countEnded(t: TallyPair, status: number, durationMs: number): void {
  for (const x of each(t)) {
    bump(x.statuses, status);
    x.durationMs += durationMs;
  }
}

function tallyOf(m: Map<Verb, Tally>, verb: Verb): Tally {
  const t = m.get(verb) ?? new Tally();
  m.set(verb, t);
  return t;
}

function verbTallies<K>(m: Map<K, Map<Verb, Tally>>, key: K): Map<Verb, Tally> {
  const c = m.get(key) ?? new Map<Verb, Tally>();
  m.set(key, c);
  return c;
}

/** One counting phase: everything between two clears. */
export class Totals {
  readonly since: number;
  readonly #seriesSeconds: number;
  readonly #byVerb = new Map<Verb, Tally>();
  readonly #byClient = new Map<string, Map<Verb, Tally>>();
  readonly #byResource = new Map<Resource, Map<Verb, Tally>>();
  readonly #series: { second: number; requests: number; byVerb: Map<Verb, number> }[] = [];
  peakListsInFlight = 0;

  constructor(since: number, seriesSeconds: number) {
    this.since = since;
    this.#seriesSeconds = seriesSeconds;
  }

  /** The tallies of `client`, `verb` and `resource`, created on first use. */
  tallies(client: string, verb: Verb, resource: Resource | undefined): TallyPair {
    return {
      verb: tallyOf(this.#byVerb, verb),
      client: tallyOf(verbTallies(this.#byClient, client), verb),
      ...(resource === undefined
        ? {}
        : { resource: tallyOf(verbTallies(this.#byResource, resource), verb) }),
    };
  }

  /** Counts a request's arrival at `time` (ms since the epoch). */
  arrived(t: TallyPair, verb: Verb, time: number): void {
    for (const x of each(t)) x.requests += 1;
    const second = Math.floor(time / 1000);
    const last = this.#series.at(-1);
    if (last !== undefined && second < last.second) {
      // A clock step back: count it in the latest second rather than reorder the series.
      last.requests += 1;
      bump(last.byVerb, verb);
      return;
    }
    if (last === undefined || second - last.second >= this.#seriesSeconds) {
      this.#series.length = 0;
    } else {
      for (let s = last.second + 1; s < second; s++)
        this.#series.push({ second: s, requests: 0, byVerb: new Map() });
    }
    if (this.#series.at(-1)?.second !== second)
      this.#series.push({ second, requests: 0, byVerb: new Map() });
    const bucket = this.#series.at(-1);
    if (bucket !== undefined) {
      bucket.requests += 1;
      bump(bucket.byVerb, verb);
    }
    if (this.#series.length > this.#seriesSeconds)
      this.#series.splice(0, this.#series.length - this.#seriesSeconds);
  }

  /** A copy of everything counted. */
  summary(listsInFlight: number, entriesDropped: number): RequestSummary {
    const freezeAll = (m: Map<Verb, Tally>) =>
      Object.fromEntries([...m].map(([verb, t]) => [verb, t.freeze()]));
    return {
      since: this.since,
      byVerb: freezeAll(this.#byVerb),
      byResource: Object.fromEntries([...this.#byResource].map(([r, m]) => [r, freezeAll(m)])),
      byClient: Object.fromEntries([...this.#byClient].map(([c, m]) => [c, freezeAll(m)])),
      perSecond: this.#series.map((b) => ({
        second: b.second,
        requests: b.requests,
        byVerb: Object.fromEntries(b.byVerb),
      })),
      listsInFlight,
      peakListsInFlight: Math.max(this.peakListsInFlight, listsInFlight),
      entriesDropped,
    };
  }
}
