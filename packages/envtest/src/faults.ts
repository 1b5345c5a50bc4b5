/**
 * Fault injection: the switches the server consults on every request and watch write, and the
 * `Faults` API tests (and the HTTP control path) drive.
 */
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
  /** Clears stall, failures, latency and chunking. */
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

  /** A serial for a new watch connection. */
  nextWatchSerial(): number {
    return this.#serials++;
  }

  peekWatchSerial(): number {
    return this.#serials;
  }

  /** Whether the stall holds the watch with this serial. */
  holds(serial: number): boolean {
    return this.stalled && serial < this.stalledBelow;
  }

  addRule(rule: FailRule): void {
    if (rule.count > 0) this.#rules.push({ rule, left: rule.count });
  }

  /** Consumes one failure for a request of `verb`, if a rule matches. */
  takeFailure(verb: Verb): StatusFailure | undefined {
    const i = this.#rules.findIndex((r) => r.rule.verb === "any" || r.rule.verb === verb);
    const r = this.#rules[i];
    if (r === undefined) return undefined;
    r.left -= 1;
    if (r.left <= 0) this.#rules.splice(i, 1);
    return injected(r.rule.status, r.rule.retryAfterSeconds);
  }

  clearRules(): void {
    this.#rules.length = 0;
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
