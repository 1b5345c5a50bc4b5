// The I/O seam between the reflector and the Kubernetes API (client-go's listwatch.go).
// The reflector depends on these types only; client.ts implements them over HTTP and the
// tests implement them with a scripted fake.

import type { Result } from "../../result.ts";

/**
 * A Secret as the mirror sees it: metadata, and `data` values as byte strings, one character per
 * byte (ADR 20), decoded from the JSON's base64 or copied from protobuf's bytes.
 */
export interface SecretObject {
  readonly metadata: {
    readonly namespace: string;
    readonly name: string;
    readonly resourceVersion: string;
    readonly uid?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** The change types a handler receives. */
export type ObjectEventType = "ADDED" | "MODIFIED" | "DELETED";

/** One decoded line of a watch response. */
export type WatchEvent =
  | { readonly type: ObjectEventType; readonly object: SecretObject }
  | {
      readonly type: "BOOKMARK";
      readonly resourceVersion: string;
      /**
       * Present on the bookmark annotated `k8s.io/initial-events-end: "true"`: the initial events
       * a streaming list asked for are all sent, and they were the state at resourceVersion.
       */
      readonly initialEventsEnd?: true;
    }
  | { readonly type: "ERROR"; readonly status: ApiStatus };

/** The subset of a metav1.Status the mirror acts on. */
export interface ApiStatus {
  readonly code: number;
  readonly reason?: string;
  readonly message?: string;
  readonly retryAfterSeconds?: number;
}

/**
 * Why a call failed. Messages never contain Secret data: decode failures say where and how
 * long, not what.
 */
export type ApiError =
  | {
      readonly kind: "http";
      readonly status: number;
      readonly reason?: string;
      readonly message: string;
      readonly retryAfterSeconds?: number;
    }
  | { readonly kind: "network"; readonly message: string }
  | { readonly kind: "decode"; readonly message: string }
  /** Credentials could not be applied (token file unreadable, exec plugin failed). */
  | { readonly kind: "auth"; readonly message: string }
  | { readonly kind: "aborted" };

/** A failure inside an open watch stream. `network` is always the last item of its stream. */
export type WatchStreamError =
  | { readonly kind: "decode"; readonly message: string; readonly bytes: number }
  | { readonly kind: "network"; readonly message: string };

/** One item of a watch stream. */
export type WatchItem = Result<WatchEvent, WatchStreamError>;

/**
 * An open watch response. Iterating yields items in server order and ends, without throwing,
 * when the server ends the response, the connection fails, the watch's signal aborts, or
 * close() is called. It can be iterated once.
 */
export interface WatchStream extends AsyncIterable<WatchItem> {
  /** Destroys the underlying connection; idempotent. A pending iteration then ends. */
  close(): void;
}

/**
 * The end of one list response, whose items were handed on one by one as they arrived; all pages
 * of one paged list share one resourceVersion.
 */
export interface ListPage {
  readonly resourceVersion: string;
  /** Present when more pages follow. */
  readonly continue?: string;
}

export interface ListOptions {
  /**
   * "0": a recent state, whichever the API server's watch cache holds (it ignores `limit`); a
   * version: a state not older than it; absent: the latest state, a consistent read that pages.
   */
  readonly resourceVersion?: string;
  /** Page size; absent means everything in one response. */
  readonly limit?: number;
  readonly continue?: string;
  readonly signal: AbortSignal;
  /** Called whenever bytes of the response arrive, so a long list is not mistaken for a stall. */
  readonly onActivity?: () => void;
}

export interface WatchOptions {
  /** Where events start; with sendInitialEvents, "" asks for the latest state. */
  readonly resourceVersion: string;
  /**
   * A streaming list (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`): the scope's
   * state, not older than resourceVersion, comes first as ADDED events ended by an
   * initialEventsEnd bookmark, then the events after it. A server without the WatchList feature
   * refuses the watch: 422, or 400 from one older than it.
   */
  readonly sendInitialEvents?: boolean;
  /** Server-side timeout: the server ends the response after this long. */
  readonly timeoutSeconds: number;
  /** Aborting before the headers resolves `aborted`; after, it closes the stream. */
  readonly signal: AbortSignal;
  /** Called whenever bytes arrive, even mid-line, so a slow large event is not mistaken for silence. */
  readonly onActivity?: () => void;
}

/**
 * Lists, watches and gets the Secrets of one scope. Every watch requests bookmarks. Never
 * throws or rejects: expected failures, including aborts, come back as ApiError values.
 */
export interface ListWatch {
  /**
   * One page of the Secrets of the scope. Each item goes to onItem, in order, as soon as it has
   * arrived, so a large list never sits in memory whole; a list that fails part way may have
   * handed some items on already.
   */
  list(
    options: ListOptions,
    onItem: (item: SecretObject) => void,
  ): Promise<Result<ListPage, ApiError>>;
  /** Opens a watch from resourceVersion; resolves once the response headers arrive. */
  watch(options: WatchOptions): Promise<Result<WatchStream, ApiError>>;
  /**
   * One Secret by name, if the scope's label selector selects it; null when it does not exist or
   * is not selected, as a list or watch of the scope would not show it either.
   */
  get(
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Result<SecretObject | null, ApiError>>;
}

/** Which Secrets a ListWatch covers. */
export interface ListWatchScope {
  /** Absent: all namespaces. */
  readonly namespace?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

/** The reflector's identity for a Secret: `namespace/name`, as client-go's MetaNamespaceKeyFunc. */
export const secretKey = (metadata: {
  readonly namespace: string;
  readonly name: string;
}): string => `${metadata.namespace}/${metadata.name}`;
