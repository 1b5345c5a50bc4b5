// What the main thread and the data thread say to each other (ADR 27). Every message is
// structured-cloned; both ends are this program, so the types are the contract and nothing is
// parsed: the outside world reaches the data thread only as HTTP requests.

import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import type { RoutesMessage, ViewUpdate } from "./view-update.ts";

/** What the data thread starts with, in its first message. */
export interface DataThreadSettings {
  /** Where the data listener listens; port 0 picks a free one. */
  readonly listen: { readonly host: string; readonly port: number };
  readonly retryAfter: RetryAfterSeconds;
  /** The memory of the route answer counts (`RouteCounts`). */
  readonly counts: SharedArrayBuffer;
  /** Report every `/v1/route` request, for the main thread to log at debug. */
  readonly reportRequests: boolean;
}

/** A request the data thread does not answer itself: everything but `/v1/route`. */
export interface ForwardedRequest {
  readonly method: string;
  /** The request target as it arrived. */
  readonly url: string;
  /** Node's raw header lines: name, value, name, value... */
  readonly rawHeaders: readonly string[];
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
}

/** The main thread's answer to a forwarded request, as Fastify gave it. */
export interface ForwardedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: Uint8Array;
}

/** One `/v1/route` request as Fastify's request log would show it. */
export interface RequestReport {
  readonly method: string;
  readonly url: string;
  readonly host: string | undefined;
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly statusCode: number;
  /** Milliseconds from the request to its answer. */
  readonly responseTime: number;
}

export type ToDataThread =
  | { readonly type: "start"; readonly settings: DataThreadSettings }
  /** The routes of a Registry, for the views to come; sent before the first view that uses them. */
  | { readonly type: "routes"; readonly routes: RoutesMessage }
  | { readonly type: "view"; readonly update: ViewUpdate }
  | { readonly type: "answer"; readonly id: number; readonly answer: ForwardedAnswer }
  /** Run V8's one full collection of start-up (ADR 25) in the thread's own heap. */
  | { readonly type: "collect" }
  /** Stop accepting; cut the connections still open after `drainMs`; then end. */
  | { readonly type: "close"; readonly drainMs: number };

export type FromDataThread =
  | { readonly type: "listening"; readonly port: number }
  | { readonly type: "listen-failed"; readonly message: string }
  /** The data listener answers from this revision on. */
  | { readonly type: "applied"; readonly revision: number }
  | { readonly type: "forward"; readonly id: number; readonly request: ForwardedRequest }
  /** Answering a `/v1/route` request threw (a bug); it was answered 500 `internal`. */
  | { readonly type: "failed"; readonly message: string; readonly stack: string | undefined }
  | { readonly type: "request"; readonly report: RequestReport }
  /** The collection ran; `error` says why it could not. */
  | { readonly type: "collected"; readonly error: string | null }
  | { readonly type: "closed" };
