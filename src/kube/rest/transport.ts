// HTTP to the API server with what client-node's KubeConfig knows: server URL, TLS material
// and credentials (tokens, token files, exec and OIDC plugins). client-node does the auth;
// requests go through node:http(s) so each watch is a request this module can destroy.

import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { parseJson } from "../../json.ts";
import { err, ok, type Result } from "../../result.ts";
import type { ApiError } from "../cache/list-watch.ts";
import { PROTOBUF_MEDIA_TYPE } from "../codec/protobuf-wire.ts";
import { EMPTY, httpError, readBody } from "./response.ts";

/** An open 200 response whose body the caller reads; destroy() closes the connection. */
export interface OpenResponse {
  readonly body: http.IncomingMessage;
  /** The response's Content-Type, which says how the body is encoded. */
  readonly contentType: string | undefined;
  destroy(): void;
}

/** What a request accepts: JSON only, or Kubernetes' protobuf first and JSON second. */
export type Accept = "json" | "protobuf-or-json";

const ACCEPT_HEADER: Readonly<Record<Accept, string>> = {
  json: "application/json",
  // The order client-go sends when it prefers protobuf; a server without it answers JSON.
  "protobuf-or-json": `${PROTOBUF_MEDIA_TYPE}, application/json`,
};

/**
 * GETs against one API server. Never rejects: every failure, including an abort, is an
 * ApiError. Credentials are re-applied per request so rotating tokens and exec plugins work.
 */
export interface KubeTransport {
  /** The server's base URL, for messages. */
  readonly server: string;
  /** GET path?query and parse the JSON body of a 2xx response. */
  getJson(
    path: string,
    query: URLSearchParams,
    signal: AbortSignal,
  ): Promise<Result<unknown, ApiError>>;
  /**
   * GET path?query and hand back the body once 200 headers arrive; aborting destroys it. A
   * watch gets a connection of its own, so destroying it never touches a pooled socket; a
   * list (`pooled`) reuses the pool, and its socket returns there once the body was read.
   * `accept` defaults to JSON.
   */
  openStream(
    path: string,
    query: URLSearchParams,
    signal: AbortSignal,
    options?: { readonly pooled?: boolean; readonly accept?: Accept },
  ): Promise<Result<OpenResponse, ApiError>>;
  /** Destroys pooled connections. In-flight requests are their signals' business. */
  close(): void;
}

interface KubeTransportError {
  readonly kind: "kubeconfig";
  readonly message: string;
}

// A list page of 500 Secrets is at most a few hundred MB in the absurd worst case; past this
// something is wrong, and a V8 string could not hold it anyway.
const MAX_BODY_BYTES = 256 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const USER_AGENT = "replica-mirror";

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A transport for kc's current context; fails on a missing or unusable server URL. */
export function createKubeTransport(kc: KubeConfig): Result<KubeTransport, KubeTransportError> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    return err({ kind: "kubeconfig", message: "kubeconfig has no current cluster" });
  let base: URL;
  try {
    base = new URL(cluster.server);
  } catch {
    return err({ kind: "kubeconfig", message: `cluster server is not a URL: ${cluster.server}` });
  }
  if (base.protocol !== "https:" && base.protocol !== "http:") {
    return err({
      kind: "kubeconfig",
      message: `cluster server must be http(s): ${cluster.server}`,
    });
  }
  if (base.protocol === "http:" && !cluster.skipTLSVerify) {
    return err({
      kind: "kubeconfig",
      message: `cluster server ${cluster.server} is plain HTTP: client-node requires insecure-skip-tls-verify: true for it`,
    });
  }
  const secure = base.protocol === "https:";
  const lib = secure ? https : http;
  // Lists and gets reuse connections; watches get their own (agent: false) so destroying one
  // never touches a pooled socket. Through a proxy, client-node's own agent is required.
  const pool = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const basePath = base.pathname.replace(/\/+$/, "");

  const request = async (
    path: string,
    query: URLSearchParams,
    signal: AbortSignal,
    pooled: boolean,
    accept: Accept,
  ): Promise<Result<{ req: http.ClientRequest; res: http.IncomingMessage }, ApiError>> => {
    if (signal.aborted) return err({ kind: "aborted" });
    const applied: https.RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(applied);
    } catch (e) {
      return err({ kind: "auth", message: `cannot apply credentials: ${describe(e)}` });
    }
    if (signal.aborted) return err({ kind: "aborted" });
    const search = query.toString();
    const options: https.RequestOptions = {
      method: "GET",
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: base.port === "" ? undefined : Number(base.port),
      path: `${basePath}${path}${search === "" ? "" : `?${search}`}`,
      headers: {
        ...headerRecord(applied.headers),
        accept: ACCEPT_HEADER[accept],
        "user-agent": USER_AGENT,
      },
      agent: cluster.proxyUrl ? applied.agent : pooled ? pool : false,
      ...(applied.auth === undefined ? {} : { auth: applied.auth }),
      ...tlsOptions(applied),
    };
    return new Promise((resolve) => {
      let settled = false;
      const settle = (
        r: Result<{ req: http.ClientRequest; res: http.IncomingMessage }, ApiError>,
      ): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve(r);
      };
      let req: http.ClientRequest;
      try {
        req = lib.request(options);
      } catch (e) {
        // Synchronous throws are invalid options, e.g. a token with characters a header forbids.
        settle(err({ kind: "auth", message: `cannot build the request: ${describe(e)}` }));
        return;
      }
      const onAbort = (): void => {
        req.destroy();
        settle(err({ kind: "aborted" }));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      // Kept for the request's lifetime: a destroyed socket must not raise an unhandled 'error'.
      req.on("error", (e) =>
        settle(
          err(signal.aborted ? { kind: "aborted" } : { kind: "network", message: describe(e) }),
        ),
      );
      req.on("response", (res) => settle(ok({ req, res })));
      req.end();
    });
  };

  return ok({
    server: cluster.server,
    async getJson(path, query, signal) {
      const sent = await request(path, query, signal, true, "json");
      if (!sent.ok) return sent;
      const { req, res } = sent.value;
      const status = res.statusCode ?? 0;
      const ok2xx = status >= 200 && status < 300;
      const body = await readBody(req, res, ok2xx ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES, signal);
      if (!body.ok && body.error.kind === "aborted") return body;
      if (!ok2xx) return err(httpError(res, body.ok ? body.value : EMPTY));
      if (!body.ok) return body;
      const json = parseJson("response body", body.value.toString("utf8"));
      return json.ok ? json : err({ kind: "decode", message: json.error.message });
    },
    async openStream(path, query, signal, options) {
      const sent = await request(
        path,
        query,
        signal,
        options?.pooled === true,
        options?.accept ?? "json",
      );
      if (!sent.ok) return sent;
      const { req, res } = sent.value;
      if (res.statusCode !== 200) {
        const body = await readBody(req, res, MAX_ERROR_BODY_BYTES, signal);
        req.destroy();
        if (!body.ok && body.error.kind === "aborted") return body;
        return err(httpError(res, body.ok ? body.value : EMPTY));
      }
      return ok({
        body: res,
        contentType: res.headers["content-type"],
        destroy: () => req.destroy(),
      });
    },
    close() {
      pool.destroy();
    },
  });
}

/** client-node sets headers as a record; the array form of RequestOptions is never used. */
function headerRecord(headers: https.RequestOptions["headers"]): http.OutgoingHttpHeaders {
  return headers === undefined || isReadonlyArray(headers) ? {} : headers;
}

const isReadonlyArray = (value: unknown): value is readonly unknown[] => Array.isArray(value);

function tlsOptions(applied: https.RequestOptions): https.RequestOptions {
  const out: https.RequestOptions = {};
  if (applied.ca !== undefined) out.ca = applied.ca;
  if (applied.cert !== undefined) out.cert = applied.cert;
  if (applied.key !== undefined) out.key = applied.key;
  if (applied.pfx !== undefined) out.pfx = applied.pfx;
  if (applied.passphrase !== undefined) out.passphrase = applied.passphrase;
  if (applied.rejectUnauthorized !== undefined) out.rejectUnauthorized = applied.rejectUnauthorized;
  if (applied.servername !== undefined) out.servername = applied.servername;
  return out;
}
