// From the API server's accounting of one phase to the figures the report shows: fleet totals,
// per-replica spreads, requests per second, relists per window, and the wait after each 429.

import type { RequestTotals } from "@replica-mirror/envtest";
import type { Collected, Req } from "./api-server.ts";
import type { FleetTotals, PerReplica, SecondRow, Spread } from "./results.ts";

/** Smallest, median and largest; zeros for no values. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: 0, median: 0, max: 0 };
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length / 2;
  const median = s.length % 2 === 1 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
  return { min: s[0]!, median, max: s.at(-1)! };
}

type Verbs = Readonly<Partial<Record<string, RequestTotals>>>;

const sum = (verbs: Verbs, f: (t: RequestTotals) => number, only?: string): number =>
  Object.entries(verbs).reduce(
    (n, [verb, t]) => n + (t === undefined || (only !== undefined && verb !== only) ? 0 : f(t)),
    0,
  );

const status = (t: RequestTotals, p: (code: number) => boolean) =>
  Object.entries(t.statuses).reduce((n, [code, c]) => n + (p(Number(code)) ? c : 0), 0);

const expired = (t: RequestTotals) => status(t, (c) => c === 410) + (t.watchErrors?.["410"] ?? 0);

/**
 * The start of a list: a paged list's first page (one per list, however many pages it took), or a
 * streaming list (a watch whose initial events are the list).
 */
export const isListStart = (r: Req): boolean =>
  (r.verb === "list" && !r.continued) || r.streamedList;

/**
 * The most paged lists in progress at once, each from its first page's arrival to its last
 * page's end: what the server holds open (a continue token, a snapshot to read from), whereas the
 * server's own count of lists in flight sees one page at a time.
 */
export function peakListsInProgress(requests: readonly Req[]): number {
  const open = new Map<string, { start: number; end: number }>();
  const spans: { start: number; end: number }[] = [];
  for (const r of [...requests].sort((a, b) => a.time - b.time)) {
    if (r.verb !== "list") continue;
    const key = `${r.client} ${r.stream}`;
    const end = r.time + (r.durationMs ?? 0);
    const current = open.get(key);
    if (r.continued && current !== undefined) current.end = Math.max(current.end, end);
    else {
      const span = { start: r.time, end };
      open.set(key, span);
      spans.push(span);
    }
  }
  const edges = spans.flatMap((s) => [
    { t: s.start, d: 1 },
    { t: s.end, d: -1 },
  ]);
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
}

/** Fleet totals and per-replica spreads of a phase, over the fleet's clients (absent ones: 0). */
export function phaseFigures(
  c: Collected,
  clients: readonly string[],
): { fleet: FleetTotals; perReplica: PerReplica } {
  const byVerb = c.summary.byVerb as Verbs;
  const listReads: Record<string, number> = {};
  for (const [read, n] of Object.entries(byVerb.list?.listReads ?? {}))
    listReads[read] = (listReads[read] ?? 0) + (n ?? 0);
  const starts = c.requests.filter(isListStart);
  const watch = byVerb.watch;
  const fleet: FleetTotals = {
    requests: sum(byVerb, (t) => t.requests),
    byVerb: Object.fromEntries(Object.entries(byVerb).map(([v, t]) => [v, t?.requests ?? 0])),
    listPages: sum(byVerb, (t) => t.requests, "list"),
    listStarts: starts.length,
    secretListStarts: starts.filter((r) => !r.registry && !r.byName).length,
    namedListStarts: starts.filter((r) => !r.registry && r.byName).length,
    listReads,
    listObjects: sum(byVerb, (t) => t.objects, "list"),
    watches: sum(byVerb, (t) => t.requests, "watch"),
    streamedLists: watch?.streamedLists ?? 0,
    refusedStreams: watch?.statuses[422] ?? 0,
    gets: sum(byVerb, (t) => t.requests, "get"),
    objects: sum(byVerb, (t) => t.objects),
    bytes: sum(byVerb, (t) => t.bytes),
    expired: sum(byVerb, expired),
    throttled: sum(byVerb, (t) => status(t, (code) => code === 429)),
    serverErrors: sum(byVerb, (t) => status(t, (code) => code >= 500)),
    unanswered: sum(byVerb, (t) => status(t, (code) => code === 0)),
    peakListsInFlight: c.summary.peakListsInFlight,
    peakListsInProgress: peakListsInProgress(c.requests),
  };
  const per = (f: (verbs: Verbs, client: string) => number) =>
    spread(clients.map((client) => f((c.summary.byClient[client] ?? {}) as Verbs, client)));
  const startsOf = new Map<string, number>();
  for (const r of starts) startsOf.set(r.client, (startsOf.get(r.client) ?? 0) + 1);
  const perReplica: PerReplica = {
    requests: per((v) => sum(v, (t) => t.requests)),
    listPages: per((v) => sum(v, (t) => t.requests, "list")),
    listStarts: per((_, client) => startsOf.get(client) ?? 0),
    listObjects: per((v) => sum(v, (t) => t.objects, "list")),
    watches: per((v) => sum(v, (t) => t.requests, "watch")),
    gets: per((v) => sum(v, (t) => t.requests, "get")),
    objects: per((v) => sum(v, (t) => t.objects)),
    bytes: per((v) => sum(v, (t) => t.bytes)),
    expired: per((v) => sum(v, expired)),
    throttled: per((v) => sum(v, (t) => status(t, (code) => code === 429))),
  };
  return { fleet, perReplica };
}

/** Requests per second by verb, from the phase's start to its end, every second present. */
export function perSecond(c: Collected, startedAt: number, endedAt: number): SecondRow[] {
  const first = Math.floor(startedAt / 1000);
  const last = Math.floor(endedAt / 1000);
  const bySecond = new Map(c.summary.perSecond.map((s) => [s.second, s.byVerb]));
  const rows: SecondRow[] = [];
  for (let s = first; s <= last; s++) {
    const counts = bySecond.get(s) ?? {};
    rows.push({
      t: s - first,
      byVerb: Object.fromEntries(Object.entries(counts).map(([v, n]) => [v, n ?? 0])),
    });
  }
  return rows;
}

/** The largest share of `times` within any window of `windowMs` (sliding, not aligned). */
export function maxWindowShare(times: readonly number[], windowMs = 1000): number {
  if (times.length === 0) return 0;
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let lo = 0, hi = 0; lo < t.length; lo++) {
    while (hi < t.length && t[hi]! < t[lo]! + windowMs) hi++;
    best = Math.max(best, hi - lo);
  }
  return best / t.length;
}

/** Counts of `times` per aligned window of `windowMs` from `start`. */
export function perWindow(times: readonly number[], start: number, windowMs = 1000): number[] {
  const counts: number[] = [];
  for (const time of times) {
    const i = Math.max(0, Math.floor((time - start) / windowMs));
    while (counts.length <= i) counts.push(0);
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts;
}

/** How each 429 was followed: the wait before the same client asked again. */
export interface RetryGaps {
  readonly throttled: number;
  /** 429s after which the client sent the same verb on the same stream again (a retry). */
  readonly followed: number;
  /** The shortest wait, in ms, from a 429 answer to that retry. */
  readonly minGapMs: number | null;
  /** Retries sooner than the Retry-After, by the verb that got the 429. */
  readonly tooSoon: Readonly<Record<string, number>>;
  /** The shortest wait to the same client's next request of any kind (another reflector's). */
  readonly minClientGapMs: number | null;
}

/**
 * Measures every 429's follow-up against `retryAfterMs`, from the 429's arrival: envtest writes an
 * injected refusal in the tick the request arrives (the fleet configures no latency), so no client
 * can have read it sooner. Its end is stamped later, when the response's `close` event runs, which
 * on a busy server is late enough to make a 3 s wait read as 2,998 ms.
 */
export function retryGaps(requests: readonly Req[], retryAfterMs: number): RetryGaps {
  const sorted = [...requests].sort((a, b) => a.time - b.time);
  let throttled = 0;
  let followed = 0;
  const tooSoon: Record<string, number> = {};
  let minGap: number | null = null;
  let minClient: number | null = null;
  for (const [i, r] of sorted.entries()) {
    if (r.status !== 429) continue;
    throttled++;
    const answeredAt = r.time;
    const later = sorted.slice(i + 1).filter((n) => n.client === r.client);
    if (later[0] !== undefined) {
      const g = later[0].time - answeredAt;
      minClient = minClient === null ? g : Math.min(minClient, g);
    }
    const retry = later.find((n) => n.stream === r.stream && n.verb === r.verb);
    if (retry === undefined) continue;
    followed++;
    const gap = retry.time - answeredAt;
    minGap = minGap === null ? gap : Math.min(minGap, gap);
    if (gap < retryAfterMs) tooSoon[r.verb] = (tooSoon[r.verb] ?? 0) + 1;
  }
  return { throttled, followed, minGapMs: minGap, tooSoon, minClientGapMs: minClient };
}

/** A count over `windowMs` scaled to one hour. */
export function perHour(count: number, windowMs: number): number {
  return windowMs <= 0 ? 0 : (count * 3_600_000) / windowMs;
}

/** Per-replica convergence in ms from `from` (each replica's own start when it is a map). */
export function convergence(
  at: ReadonlyMap<string, number | null>,
  from: number | ReadonlyMap<string, number>,
): { convergeMs: Spread | null; converged: number; times: number[] } {
  const times: number[] = [];
  for (const [client, t] of at) {
    if (t === null) continue;
    const start = typeof from === "number" ? from : (from.get(client) ?? t);
    times.push(Math.max(0, t - start));
  }
  return {
    convergeMs: times.length === 0 ? null : spread(times),
    converged: times.length,
    times,
  };
}
