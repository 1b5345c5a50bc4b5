// All a pusher tells the outside: what the lead wires to metrics (pushes, push duration, failures
// by reason, tables lost or changed behind its back, the revision each proxy holds), logs and the
// status API.

import type { PushFailureReason } from "./target.ts";

/** What a pusher asks of a proxy: a push, a version check, or a verification of every entry. */
export type PushOperation = "push" | "check" | "verify";

/** What one pusher reports, each event naming its target. */
export interface PushObserver {
  /** A table landed and the proxy confirmed it answers from `revision`. */
  pushed(event: {
    readonly target: string;
    readonly revision: number;
    readonly durationMs: number;
  }): void;
  /** A push, a version check or a verification failed; the pusher tries again at its next one. */
  failed(event: {
    readonly target: string;
    readonly operation: PushOperation;
    readonly reason: PushFailureReason;
    readonly message: string;
    readonly durationMs: number;
  }): void;
  /** The proxy holds another table than the one pushed to it (restarted, or lost it): pushing again. */
  lost(event: {
    readonly target: string;
    readonly expected: number;
    readonly held: number | null;
  }): void;
  /**
   * The proxy holds another table than the one pushed to it under the same revision: something
   * else wrote it (or it lost entries). Pushing the whole table again.
   */
  drifted(event: { readonly target: string; readonly revision: number }): void;
  /** The revision the proxy answers from, as last seen, changed (null: it holds none). */
  held(event: { readonly target: string; readonly revision: number | null }): void;
}

/** An observer that ignores everything. */
export const silentPushObserver: PushObserver = {
  pushed: () => {},
  failed: () => {},
  lost: () => {},
  drifted: () => {},
  held: () => {},
};
