// A scripted ListWatch, after client-go's watch.NewFake(): tests queue list replies, push
// events into the open watch, end or break streams, and fail calls.

import type {
  ApiError,
  ApiStatus,
  ListOptions,
  ListPage,
  ListWatch,
  SecretObject,
  WatchItem,
  WatchOptions,
  WatchStream,
} from "../../src/kube/cache/list-watch.ts";
import { err, ok, type Result } from "../../src/result.ts";

/** A Secret fixture. */
export function secret(
  name: string,
  resourceVersion: string,
  data: Record<string, string> = {},
  namespace = "default",
): SecretObject {
  return { metadata: { namespace, name, resourceVersion }, data };
}

/** A scripted list answer: the items the fake hands on one by one, then the page's end. */
export interface ListReply extends ListPage {
  readonly items: readonly SecretObject[];
}

/** A list page fixture. */
export function page(resourceVersion: string, items: SecretObject[], token?: string): ListReply {
  return token === undefined
    ? { items, resourceVersion }
    : { items, resourceVersion, continue: token };
}

export const gone: ApiError = {
  kind: "http",
  status: 410,
  reason: "Expired",
  message: "too old resource version",
};

/** One watch stream the fake handed out; the test pushes into it. */
class FakeWatch implements WatchStream {
  /** What the watch asked for; `sendInitialEvents` only when it is a streaming list. */
  readonly options: {
    readonly resourceVersion: string;
    readonly timeoutSeconds: number;
    readonly sendInitialEvents?: true;
  };
  readonly #queue: WatchItem[] = [];
  #waiting: ((r: IteratorResult<WatchItem>) => void) | undefined;
  #ended = false;
  #closed = false;

  constructor(options: WatchOptions) {
    this.options = {
      resourceVersion: options.resourceVersion,
      timeoutSeconds: options.timeoutSeconds,
      ...(options.sendInitialEvents === true ? { sendInitialEvents: true } : {}),
    };
    options.signal.addEventListener("abort", () => this.close(), { once: true });
  }

  /** True once the consumer closed it (or its signal aborted). */
  get closed(): boolean {
    return this.#closed;
  }

  #push(item: WatchItem): void {
    if (this.#closed || this.#ended) throw new Error("push into a finished FakeWatch");
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting({ value: item, done: false });
    else this.#queue.push(item);
  }

  add(object: SecretObject): void {
    this.#push(ok({ type: "ADDED", object }));
  }
  modify(object: SecretObject): void {
    this.#push(ok({ type: "MODIFIED", object }));
  }
  delete(object: SecretObject): void {
    this.#push(ok({ type: "DELETED", object }));
  }
  bookmark(resourceVersion: string): void {
    this.#push(ok({ type: "BOOKMARK", resourceVersion }));
  }
  /** The bookmark that ends a streaming list's initial events, at resourceVersion. */
  endInitialEvents(resourceVersion: string): void {
    this.#push(ok({ type: "BOOKMARK", resourceVersion, initialEventsEnd: true }));
  }
  error(status: ApiStatus): void {
    this.#push(ok({ type: "ERROR", status }));
  }
  malformed(bytes = 42): void {
    this.#push(
      err({ kind: "decode", message: "watch event of 42 bytes is not valid JSON", bytes }),
    );
  }
  /** The connection fails mid-stream. */
  drop(message = "socket hang up"): void {
    this.#push(err({ kind: "network", message }));
    this.end();
  }
  /** The server ends the response. */
  end(): void {
    this.#ended = true;
    this.#flushEnd();
  }

  close(): void {
    this.#closed = true;
    this.#queue.length = 0;
    this.#flushEnd();
  }

  #flushEnd(): void {
    if (this.#queue.length > 0) return;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchItem> {
    return {
      next: () => {
        const item = this.#queue.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.#ended || this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiting = resolve;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

type Pending<T> = {
  readonly resolve: (r: Result<T, ApiError>) => void;
  readonly signal: AbortSignal;
};

/** A ListWatch driven by the test. Unscripted lists wait for replyList() or an abort. */
export class FakeListWatch implements ListWatch {
  readonly listCalls: { resourceVersion?: string; limit?: number; continue?: string }[] = [];
  readonly watches: FakeWatch[] = [];
  /** Every signal handed to a call, to check that stop() aborted them all. */
  readonly signals: AbortSignal[] = [];
  readonly objects = new Map<string, SecretObject>();
  readonly #listReplies: Result<ListReply, ApiError>[] = [];
  readonly #pendingLists: Pending<ListReply>[] = [];
  readonly #watchReplies: (ApiError | "hang")[] = [];

  /** Answers list calls in order, the pending one first. */
  replyList(...replies: Result<ListReply, ApiError>[]): void {
    for (const reply of replies) {
      const pending = this.#pendingLists.shift();
      if (pending) pending.resolve(reply);
      else this.#listReplies.push(reply);
    }
  }

  /** The next watch call fails with error. */
  failWatch(error: ApiError): void {
    this.#watchReplies.push(error);
  }

  /** The next watch call never gets response headers; only its signal ends it. */
  hangWatch(): void {
    this.#watchReplies.push("hang");
  }

  /** The most recent watch stream. */
  get current(): FakeWatch {
    const last = this.watches.at(-1);
    if (last === undefined) throw new Error("no watch was opened");
    return last;
  }

  async list(
    options: ListOptions,
    onItem: (item: SecretObject) => void,
  ): Promise<Result<ListPage, ApiError>> {
    this.signals.push(options.signal);
    this.listCalls.push({
      ...(options.resourceVersion === undefined
        ? {}
        : { resourceVersion: options.resourceVersion }),
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.continue === undefined ? {} : { continue: options.continue }),
    });
    const reply = await this.#nextListReply(options.signal);
    if (!reply.ok) return reply;
    for (const item of reply.value.items) onItem(item);
    const { resourceVersion, continue: token } = reply.value;
    return ok(token === undefined ? { resourceVersion } : { resourceVersion, continue: token });
  }

  #nextListReply(signal: AbortSignal): Promise<Result<ListReply, ApiError>> {
    const reply = this.#listReplies.shift();
    if (reply !== undefined) return Promise.resolve(reply);
    const options = { signal };
    return new Promise((resolve) => {
      const pending: Pending<ListReply> = { resolve, signal: options.signal };
      this.#pendingLists.push(pending);
      options.signal.addEventListener("abort", () => {
        const i = this.#pendingLists.indexOf(pending);
        if (i !== -1) this.#pendingLists.splice(i, 1);
        resolve(err({ kind: "aborted" }));
      });
    });
  }

  watch(options: WatchOptions): Promise<Result<WatchStream, ApiError>> {
    this.signals.push(options.signal);
    const reply = this.#watchReplies.shift();
    if (reply === "hang") {
      return new Promise((resolve) => {
        options.signal.addEventListener("abort", () => resolve(err({ kind: "aborted" })));
      });
    }
    if (reply !== undefined) return Promise.resolve(err(reply));
    const stream = new FakeWatch(options);
    this.watches.push(stream);
    return Promise.resolve(ok(stream));
  }

  get(
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Result<SecretObject | null, ApiError>> {
    this.signals.push(signal);
    return Promise.resolve(ok(this.objects.get(`${namespace}/${name}`) ?? null));
  }
}
