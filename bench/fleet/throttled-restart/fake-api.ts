// A standalone API server for the throttled-restart scenario, plain node:http and independent of
// envtest: the Secrets of one namespace (secrets.ts) served as kube-apiserver serves them to the
// sidecar (lists at a resourceVersion or paged, watches with bookmarks, streaming lists with
// `sendInitialEvents=true` ended by the `k8s.io/initial-events-end` bookmark, GETs), JSON only.
// Its faults are an operator's cluster's: a restart that cuts every connection, refuses new ones
// for a while and forgets the watch history (a resume from before it gets a watch ERROR event with
// a 410 Status, as kube-apiserver sends it), then API Priority and Fairness answering every list,
// streaming lists included, 429 with a Retry-After.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import {
  type Change,
  type SecretStore,
  type StoredSecret,
  selectorOf,
  selects,
} from "./secrets.ts";
import { bookmark, clientOf, continuation, send, status } from "./wire.ts";

/** One request, as the scenario's figures need it. */
export interface LoggedRequest {
  readonly client: string;
  readonly verb: "list" | "watch" | "watch-list" | "get";
  /** On the Registry Secret (a `metadata.name=` selector), not the App Secrets. */
  readonly registry: boolean;
  /** Milliseconds since the epoch at arrival. */
  readonly time: number;
  status?: number;
  /** A watch answered with an ERROR event of this code. */
  watchError?: number;
  /** When a complete list had been written: a last page, or the initial-events-end bookmark. */
  listedAt?: number;
}

export interface FakeApiOptions {
  /** Serve streaming lists (kube-apiserver 1.34+), else refuse them 422 as older servers do. */
  readonly watchList: boolean;
  /** While throttling, plain watches (resumes) are answered 429 too; else only lists are. */
  readonly throttleWatches: boolean;
  readonly bookmarkIntervalMs: number;
}

/** A restart, as it happened. */
export interface Restart {
  readonly downAt: number;
  readonly upAt: number;
  readonly throttledUntil: number;
}

/** Each stored version's JSON, encoded once however many lists and watches send it. */
const encoded = new WeakMap<StoredSecret, string>();
function jsonOf(secret: StoredSecret): string {
  let json = encoded.get(secret);
  if (json === undefined) {
    json = JSON.stringify(secret);
    encoded.set(secret, json);
  }
  return json;
}

/** The server; `listen()` first. */
export class FakeApi {
  readonly log: LoggedRequest[] = [];
  readonly #store: SecretStore;
  readonly #o: FakeApiOptions;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #closingUntil = 0;
  #downUntil = 0;
  #throttledUntil = 0;
  #retryAfterSeconds = 0;

  constructor(store: SecretStore, options: FakeApiOptions) {
    this.#store = store;
    this.#o = options;
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.on("connection", (socket: Socket) => {
      const now = Date.now();
      if (now >= this.#closingUntil && now < this.#downUntil) {
        socket.destroy();
        return;
      }
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /** Listens on a free loopback port; resolves to the server's URL. */
  listen(): Promise<string> {
    return new Promise((resolve) =>
      this.#server.listen(0, "127.0.0.1", () => {
        const a = this.#server.address();
        resolve(`http://127.0.0.1:${typeof a === "object" && a !== null ? a.port : 0}`);
      }),
    );
  }

  /**
   * Restarts: every connection is cut and the watch history lost. For `closingMs` the server
   * shuts down (it still accepts connections, and ends every watch at once, empty); then it
   * refuses connections for `downMs`; then every list and streaming list is answered 429
   * `Retry-After: retryAfterSeconds` for `throttleMs`.
   */
  restart(r: {
    closingMs: number;
    downMs: number;
    throttleMs: number;
    retryAfterSeconds: number;
  }): Restart {
    const downAt = Date.now();
    this.#store.forgetHistory();
    this.#closingUntil = downAt + r.closingMs;
    this.#downUntil = this.#closingUntil + r.downMs;
    this.#throttledUntil = this.#downUntil + r.throttleMs;
    this.#retryAfterSeconds = r.retryAfterSeconds;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    return { downAt, upAt: this.#downUntil, throttledUntil: this.#throttledUntil };
  }

  close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://localhost");
    const m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?secrets(?:\/([^/]+))?$/.exec(url.pathname);
    if (req.method !== "GET" || m === null) {
      send(res, 404, status(404, "NotFound", `${url.pathname} not found`));
      return;
    }
    const namespace = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    const q = url.searchParams;
    const selector = selectorOf(q);
    const streaming = q.get("sendInitialEvents") === "true";
    const watch = q.get("watch") === "1" || q.get("watch") === "true";
    const entry: LoggedRequest = {
      client: clientOf(req),
      verb: name !== undefined ? "get" : watch ? (streaming ? "watch-list" : "watch") : "list",
      registry: selector.name !== undefined,
      time: Date.now(),
    };
    this.log.push(entry);
    res.once("finish", () => {
      entry.status ??= res.statusCode;
    });
    const elsewhere = namespace !== undefined && namespace !== this.#store.namespace;
    if (name !== undefined) {
      const secret = elsewhere ? undefined : this.#store.get(name);
      if (secret === undefined)
        send(res, 404, status(404, "NotFound", `secrets "${name}" not found`));
      else send(res, 200, secret);
      return;
    }
    if (streaming && !this.#o.watchList) {
      const why =
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled";
      send(res, 422, status(422, "Invalid", why));
      return;
    }
    if (watch && Date.now() < this.#closingUntil) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end();
      return;
    }
    const refusable = streaming || !watch || this.#o.throttleWatches;
    if (refusable && Date.now() < this.#throttledUntil) {
      const r = this.#retryAfterSeconds;
      const message = "Too many requests, please try again later.";
      send(res, 429, status(429, "TooManyRequests", message, r), { "retry-after": String(r) });
      return;
    }
    const sel = elsewhere ? { name: "\u0000", labels: [] } : selector;
    if (watch) this.#watch(q, sel, streaming, entry, res);
    else this.#list(q, sel, entry, res);
  }

  #list(
    q: URLSearchParams,
    sel: ReturnType<typeof selectorOf>,
    entry: LoggedRequest,
    res: ServerResponse,
  ): void {
    const rv = this.#store.resourceVersion;
    const items = this.#store.list(sel);
    const token = q.get("continue");
    const limit = Number(q.get("limit") ?? "0");
    // Paging applies to a consistent read (no resourceVersion) or a continuation; a list at a
    // resourceVersion is served whole from the watch cache, whatever the limit.
    const paged = limit > 0 && (q.get("resourceVersion") ?? "") === "" ? limit : 0;
    const from = token === null ? null : continuation(token);
    if (from === undefined) {
      send(res, 410, status(410, "Expired", "the provided continue parameter is too old"));
      return;
    }
    const rest = from === null ? items : items.filter((s) => s.metadata.name > from.after);
    const page = paged > 0 ? rest.slice(0, paged) : rest;
    const more = paged > 0 && rest.length > paged;
    const listRv = from?.rv ?? rv;
    const next = more
      ? Buffer.from(JSON.stringify({ rv: listRv, after: page.at(-1)!.metadata.name })).toString(
          "base64url",
        )
      : undefined;
    if (!more) res.once("finish", () => (entry.listedAt = Date.now()));
    const metadata = {
      resourceVersion: String(listRv),
      ...(next === undefined ? {} : { continue: next }),
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      `{"kind":"SecretList","apiVersion":"v1","metadata":${JSON.stringify(metadata)},"items":[${page.map(jsonOf).join(",")}]}`,
    );
  }

  #watch(
    q: URLSearchParams,
    sel: ReturnType<typeof selectorOf>,
    streaming: boolean,
    entry: LoggedRequest,
    res: ServerResponse,
  ): void {
    const asked = q.get("resourceVersion") ?? "";
    const from = asked === "" || asked === "0" ? this.#store.resourceVersion : Number(asked);
    const backlog = streaming ? [] : this.#store.since(from);
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    const write = (event: unknown) => res.write(`${JSON.stringify(event)}\n`);
    if (backlog === undefined) {
      entry.watchError = 410;
      const message = `too old resource version: ${from} (${this.#store.resourceVersion})`;
      write({ type: "ERROR", object: status(410, "Expired", message) });
      res.end();
      return;
    }
    let sent = from;
    const deliver = (c: Change) => {
      if (c.rv <= sent || !selects(sel, c.object)) return;
      sent = c.rv;
      res.write(`{"type":"${c.type}","object":${jsonOf(c.object)}}\n`);
    };
    const unsubscribe = this.#store.subscribe(deliver);
    if (streaming) {
      // One write for the whole state: the server's time goes to the sidecars, not to syscalls.
      const added = this.#store.list(sel).map((o) => `{"type":"ADDED","object":${jsonOf(o)}}\n`);
      sent = this.#store.resourceVersion;
      res.write(`${added.join("")}${JSON.stringify(bookmark(sent, true))}\n`);
      entry.listedAt = Date.now();
    } else for (const c of backlog) deliver(c);
    const ticker = setInterval(
      () => write(bookmark(Math.max(sent, this.#store.resourceVersion), false)),
      this.#o.bookmarkIntervalMs,
    );
    const timeout = Number(q.get("timeoutSeconds") ?? "0");
    const ender = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.once("close", () => {
      unsubscribe();
      clearInterval(ticker);
      clearTimeout(ender);
    });
  }
}
