/**
 * Fault injection: the switches the server consults on every request and watch write, and the
 * `Faults` API tests (and the HTTP control path) drive.
 */
import { seededRandom } from "./chunking.ts";
import type { Verb } from "./routes.ts";
import { injected, type StatusFailure } from "./status.ts";

/**
 * The API verbs a failure rule can target; `any` matches every API request (not discovery or
 * health).
 */
export type FaultVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "any";
/** How watch lines are cut into writes (see Faults.chunking). */
export type ChunkingMode = "normal" | "split" | "coalesce";
/** The kind of bad line Faults.injectGarbage writes. */
export type GarbageKind = "bytes" | "truncated" | "non-json";

/** A failure to inject into the next `count` requests of `verb`. */
export interface FailRule {
  readonly verb: FaultVerb;
  /** How many matching requests fail before the rule is used up. */
  readonly count: number;
  /**
   * The HTTP code; the body is the Status the real server sends for it (500 InternalError, 429
   * TooManyRequests, …).
   */
  readonly status: number;
  /** Adds `Retry-After` and `details.retryAfterSeconds`. */
  readonly retryAfterSeconds?: number;
}

/**
 * API Priority and Fairness shedding load: a seeded share of the requests of `verbs` is answered
 * 429 TooManyRequests with `Retry-After`, as an overloaded API server answers.
 */
export interface ThrottleRule {
  readonly verbs: readonly FaultVerb[];
  /** The share of matching requests refused, 0 to 1 (0 ends the throttling). */
  readonly share: number;
  /** `Retry-After` and `details.retryAfterSeconds` (default 1). */
  readonly retryAfterSeconds?: number;
  /** How long it lasts from now (default: until replaced or reset). */
  readonly forMs?: number;
  /** Which requests are refused is reproducible for a seed (default 1). */
  readonly seed?: number;
}

/** The fault-injection API. Every switch is off at start; `reset()` turns them all off again. */
export interface Faults {
  /** Destroys every open watch connection's socket mid-stream; returns how many. */
  dropWatches(): number;
  /** Ends every open watch cleanly (the chunked stream terminates); returns how many. */
  endWatches(): number;
  /**
   * While on, the watches open at that moment hold their events (and bookmarks) with their
   * connections left open, as a half-open connection would; watches opened later flow, so a client
   * that detects the silence and reopens converges. Off releases held events in order.
   */
  stall(on: boolean): void;
  /**
   * Discards the event history: every resume (or continue token) from an older resourceVersion gets
   * 410.
   */
  compact(): void;
  /**
   * Fails the next `count` requests of `verb` with `status`. Rules queue; each request consumes at
   * most one.
   */
  failNext(rule: FailRule): void;
  /**
   * Answers a share of requests 429 for a while (see ThrottleRule), replacing any earlier
   * throttling. Consulted after `failNext` rules, which take precedence.
   */
  throttle(rule: ThrottleRule): void;
  /** Delays every Kubernetes API response (not the control path) by `ms`. */
  setLatency(ms: number): void;
  /**
   * How watch lines are written: `split` cuts each line into 2–5 writes ~1 ms apart, `coalesce`
   * writes 2–5 lines per write, `normal` writes what a flush pass collected at once. The seed makes
   * boundaries reproducible (stream i uses seed + i).
   */
  chunking(opts: { readonly mode: ChunkingMode; readonly seed?: number }): void;
  /**
   * Writes one bad line into every open watch, in order with its events, leaving the stream open:
   * `bytes` random non-UTF-8 bytes, `truncated` the first half of an event line, `non-json` plain
   * text. Returns how many streams received it.
   */
  injectGarbage(kind: GarbageKind): number;
  /** Clears stall, failures, throttling, latency and chunking. */
  reset(): void;
}

/** The mutable switches, read by the server and the watch connections. */
export class FaultSettings {
  stalled = false;
  /** Watches with a serial below this are the ones a stall holds. */
  stalledBelow = 0;
  #serials = 0;
  latencyMs = 0;
  chunkingMode: ChunkingMode = "normal";
  chunkingSeed = 1;
  readonly #rules: { rule: FailRule; left: number }[] = [];
  readonly #now: () => number;
  #throttle:
    | {
        readonly verbs: ReadonlySet<string>;
        readonly share: number;
        readonly failure: StatusFailure;
        readonly until: number;
        readonly random: () => number;
      }
    | undefined;

  /** `now` is a monotonic clock in milliseconds (throttling's `forMs` is measured on it). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** A serial for a new watch connection. */
  nextWatchSerial(): number {
    return this.#serials++;
  }

  /** The serial the next watch connection will get. */
  peekWatchSerial(): number {
    return this.#serials;
  }

  /** Whether the stall holds the watch with this serial. */
  holds(serial: number): boolean {
    return this.stalled && serial < this.stalledBelow;
  }

  /** Queues a failure rule; a count of 0 adds nothing. */
  addRule(rule: FailRule): void {
    if (rule.count > 0) this.#rules.push({ rule, left: rule.count });
  }

  /** Replaces the throttling; a share of 0 ends it. */
  setThrottle(rule: ThrottleRule): void {
    if (rule.share <= 0 || rule.verbs.length === 0) {
      this.#throttle = undefined;
      return;
    }
    this.#throttle = {
      verbs: new Set(rule.verbs),
      share: Math.min(1, rule.share),
      failure: injected(429, rule.retryAfterSeconds ?? 1),
      until: rule.forMs === undefined ? Number.POSITIVE_INFINITY : this.#now() + rule.forMs,
      random: seededRandom(rule.seed ?? 1),
    };
  }

  /** The failure to answer a request of `verb` with, if a rule or the throttling picks it. */
  takeFailure(verb: Verb): StatusFailure | undefined {
    const i = this.#rules.findIndex((r) => r.rule.verb === "any" || r.rule.verb === verb);
    const r = this.#rules[i];
    if (r !== undefined) {
      r.left -= 1;
      if (r.left <= 0) this.#rules.splice(i, 1);
      return injected(r.rule.status, r.rule.retryAfterSeconds);
    }
    const t = this.#throttle;
    if (t === undefined) return undefined;
    if (this.#now() >= t.until) {
      this.#throttle = undefined;
      return undefined;
    }
    if (!t.verbs.has("any") && !t.verbs.has(verb)) return undefined;
    return t.random() < t.share ? t.failure : undefined;
  }

  /** Turns off every failure rule and the throttling. */
  clearRules(): void {
    this.#rules.length = 0;
    this.#throttle = undefined;
  }
}

/** What the Faults API drives outside the switches: the open watches and the store. */
export interface FaultTargets {
  dropAll(): number;
  endAll(): number;
  release(): void;
  injectGarbage(kind: GarbageKind): number;
  compact(): void;
}

/** Builds the Faults API over the switches and their targets. */
export function createFaults(settings: FaultSettings, targets: FaultTargets): Faults {
  return {
    dropWatches: () => targets.dropAll(),
    endWatches: () => targets.endAll(),
    stall: (on) => {
      settings.stalled = on;
      if (on) settings.stalledBelow = settings.peekWatchSerial();
      if (!on) targets.release();
    },
    compact: () => targets.compact(),
    failNext: (rule) => settings.addRule(rule),
    throttle: (rule) => settings.setThrottle(rule),
    setLatency: (ms) => {
      settings.latencyMs = Math.max(0, ms);
    },
    chunking: ({ mode, seed }) => {
      settings.chunkingMode = mode;
      if (seed !== undefined) settings.chunkingSeed = seed;
      targets.release();
    },
    injectGarbage: (kind) => targets.injectGarbage(kind),
    reset: () => {
      settings.stalled = false;
      settings.latencyMs = 0;
      settings.chunkingMode = "normal";
      settings.clearRules();
      targets.release();
    },
  };
}
