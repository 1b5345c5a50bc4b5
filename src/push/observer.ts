// All a pusher tells the outside: what the lead wires to metrics (pushes, push duration, failures
// by reason, the revision each proxy holds), logs and the status API.

import type { PushFailureReason } from "./target.ts";

/** What one pusher reports, each event naming its target. */
export interface PushObserver {
  /** A table landed and the proxy confirmed it answers from `revision`. */
  pushed(event: {
    readonly target: string;
    readonly revision: number;
    readonly durationMs: number;
  }): void;
  /** A push or a version check failed; the pusher tries again at its next check. */
  failed(event: {
    readonly target: string;
    readonly operation: "push" | "check";
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
  /** The revision the proxy answers from, as last seen, changed (null: it holds none). */
  held(event: { readonly target: string; readonly revision: number | null }): void;
}

/** An observer that ignores everything. */
export const silentPushObserver: PushObserver = {
  pushed: () => {},
  failed: () => {},
  lost: () => {},
  held: () => {},
};
