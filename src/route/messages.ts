// What the main thread and the data thread say to each other: the main thread sends
// settings, the routes of each adopted Registry and a view of each published Snapshot; the data
// thread sends back only lifecycle events (its counts are in shared memory). Every message is
// structured-cloned; both ends are this program, so the types are the contract and nothing is
// parsed: the outside world reaches the data thread only as HTTP requests.

import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import type { Result } from "../result.ts";
import type { Released } from "../runtime/start-up-collection.ts";
import type { ListenerLimits } from "./listener-limits.ts";
import type { RoutesMessage, ViewUpdate } from "./view-update.ts";

/** What the data thread starts with, in its first message. */
export interface DataThreadSettings {
  /** Where the data listener listens; port 0 picks a free one. */
  readonly listen: { readonly host: string; readonly port: number };
  readonly retryAfter: RetryAfterSeconds;
  readonly limits: ListenerLimits;
  /** The memory of the route answer counts (`RouteCounts`). */
  readonly counts: SharedArrayBuffer;
  /** The memory of the thread's `Heartbeat`. */
  readonly heartbeat: SharedArrayBuffer;
}

export type ToDataThread =
  | { readonly type: "start"; readonly settings: DataThreadSettings }
  /** The routes of a Registry, for the views to come; sent before the first view that uses them. */
  | { readonly type: "routes"; readonly routes: RoutesMessage }
  | { readonly type: "view"; readonly update: ViewUpdate }
  /** Stop accepting; cut the connections still open after `drainMs`; then end. */
  | { readonly type: "close"; readonly drainMs: number };

export type FromDataThread =
  | { readonly type: "listening"; readonly port: number }
  | { readonly type: "listen-failed"; readonly message: string }
  /** The data listener answers from this revision on. */
  | { readonly type: "applied"; readonly revision: number }
  /**
   * Connections closed to let new ones in at `limits.maxConnections`, since the last report:
   * idle ones, and ones in the middle of a request (when none was idle).
   */
  | { readonly type: "evicted"; readonly idle: number; readonly midRequest: number }
  /** Answering a request threw (a bug); it was answered 500. */
  | { readonly type: "failed"; readonly message: string; readonly stack: string | undefined }
  /** What the thread's collection after start gave back, or why there was none. */
  | { readonly type: "collected"; readonly released: Result<Released, string> }
  | { readonly type: "closed" };
