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

export type ReflectorStatus =
  | {
      readonly kind: "listed";
      readonly resourceVersion: string;
      readonly items: number;
      readonly pages: number;
    }
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
