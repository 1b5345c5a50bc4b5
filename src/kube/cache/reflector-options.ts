// What a Reflector is told, and the defaults it fills in.

import type { Clock } from "../../clock.ts";
import { systemClock } from "../../clock.ts";
import { type BackoffPolicy, DEFAULT_BACKOFF } from "./backoff.ts";
import type { ListWatch } from "./list-watch.ts";
import type { ReflectorHandler } from "./reflector-handler.ts";
import type { ReflectorStatus } from "./reflector-status.ts";
import { DEFAULT_PACING, RestartPolicy } from "./restart-policy.ts";
import { processStreamingLists, type StreamingLists } from "./streaming-lists.ts";

export interface ReflectorOptions {
  /** For status and logs. */
  readonly name: string;
  readonly listWatch: ListWatch;
  readonly handler: ReflectorHandler;
  /** T: each watch asks for a server-side timeout in [T, 2T) seconds, as client-go does. */
  readonly watchTimeoutSeconds: number;
  readonly pageSize?: number;
  readonly clock?: Clock;
  /** In [0, 1), like Math.random. */
  readonly random?: () => number;
  readonly backoff?: Partial<BackoffPolicy>;
  /** How far relists after 410 Expired are spread; default 5 s (ADR 61). */
  readonly relistSpreadMs?: number;
  /** Silence allowed past a watch's own timeoutSeconds; default max(1 s, T/10). */
  readonly inactivityGraceMs?: number;
  /**
   * How long one list page may go without a byte arriving (before its headers, or between two
   * chunks of its body); default 60 s. Not a limit on the whole page: a large list served by a
   * busy API server keeps arriving, and cutting it off only to ask again adds load.
   */
  readonly requestTimeoutMs?: number;
  readonly onStatus?: (status: ReflectorStatus) => void;
  /**
   * Whether lists start as streaming lists, shared with every reflector that talks to the same
   * API server; default: the process's own (streaming-lists.ts).
   */
  readonly streamingLists?: StreamingLists;
}

/** The options a reflector runs with, defaults filled in. */
export type ReflectorSettings = Required<
  Omit<ReflectorOptions, "name" | "listWatch" | "handler" | "backoff" | "relistSpreadMs">
>;

/** The options with their defaults; throws on a watch timeout that is not a positive integer. */
export function reflectorSettings(options: ReflectorOptions): ReflectorSettings {
  const t = options.watchTimeoutSeconds;
  if (!Number.isInteger(t) || t < 1)
    throw new RangeError(`watchTimeoutSeconds must be a positive integer, got ${t}`);
  return {
    watchTimeoutSeconds: t,
    pageSize: options.pageSize ?? 500,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    inactivityGraceMs: options.inactivityGraceMs ?? Math.max(1_000, t * 100),
    requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    onStatus: options.onStatus ?? (() => {}),
    streamingLists: options.streamingLists ?? processStreamingLists,
  };
}

/** The restart policy the options ask for. */
export function restartPolicyOf(options: ReflectorOptions, random: () => number): RestartPolicy {
  return new RestartPolicy({ ...DEFAULT_BACKOFF, ...options.backoff }, random, {
    relistSpreadMs: options.relistSpreadMs ?? DEFAULT_PACING.relistSpreadMs,
  });
}

/** Where a reflector resumes instead of listing: what the handler holds, and how far it got. */
export interface ResumePoint {
  readonly resourceVersion: string;
  /**
   * The objects the handler already holds: `namespace/name` and the resourceVersion it has. Read
   * once, when the reflector first needs it (KnownVersions.seed): it must not change until then.
   */
  readonly known: Iterable<readonly [key: string, resourceVersion: string]>;
}
