// What a reflector reports about itself, for logs and metrics. Never carries Secret data.

import type { ApiError, ObjectEventType, WatchStreamError } from "./list-watch.ts";

/**
 * Why a watch was reopened.
 * - timeout: the server ended it at (about) its timeoutSeconds, the normal case;
 * - closed: the server ended it early;
 * - dropped: the connection failed mid-stream;
 * - inactive: nothing arrived before the client-side deadline, so it was torn down;
 * - decode: a line could not be decoded;
 * - expired: 410 Gone, the resourceVersion is too old (a relist follows);
 * - throttled: 429; error: every other failure to open, or an ERROR event.
 */
export type WatchRestartReason =
  | "timeout"
  | "closed"
  | "dropped"
  | "inactive"
  | "decode"
  | "expired"
  | "throttled"
  | "error";

/** Why a list was started again after the first one. */
export type RelistReason = "expired" | "continue-expired" | "decode" | "internal";

/**
 * How a complete list arrived: `watch-list`, as the initial events of a streaming list (a watch
 * with sendInitialEvents); `list`, as the pages of a list (the API server refused streaming lists).
 */
export type ListMode = "watch-list" | "list";

export type ReflectorStatus =
  | {
      readonly kind: "listed";
      readonly mode: "list";
      readonly resourceVersion: string;
      readonly items: number;
      readonly pages: number;
    }
  | {
      readonly kind: "listed";
      readonly mode: "watch-list";
      readonly resourceVersion: string;
      readonly items: number;
    }
  /**
   * The API server refused a streaming list (422 with the WatchList feature gate off, 400 from an
   * older server): every reflector of the process lists instead from now on. Reported once per
   * process, by the reflector that learnt it.
   */
  | { readonly kind: "streaming-refused"; readonly error: ApiError }
  | {
      readonly kind: "watch-restart";
      readonly reason: WatchRestartReason;
      readonly resourceVersion: string;
      /** Events and bookmarks the ended watch delivered. */
      readonly events: number;
    }
  | { readonly kind: "relist"; readonly reason: RelistReason }
  | { readonly kind: "backoff"; readonly delayMs: number }
  | {
      readonly kind: "error";
      readonly phase: "list" | "watch" | "internal";
      readonly error:
        | ApiError
        | WatchStreamError
        | { readonly kind: "bug"; readonly message: string };
    }
  | {
      readonly kind: "handler-error";
      readonly event: ObjectEventType | "SYNCED" | "BOOKMARK" | "LISTED";
      readonly key?: string;
      readonly error: unknown;
    };
