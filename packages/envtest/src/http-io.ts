/**
 * Request and response plumbing shared by every handler: bodies, JSON and protobuf answers, Status
 * errors, query strings.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { encodeStatus, envelopeParts, PROTOBUF_MEDIA_TYPE } from "./protobuf-encode.ts";
import { entityTooLarge, failWith, type OrStatus, ok, type StatusFailure } from "./status.ts";

/** kube-apiserver refuses request bodies over 3 MiB before decoding them. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole request body, or the 413 Status when it exceeds the limit. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<OrStatus<Buffer>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.on("end", () =>
      resolve(over ? failWith(entityTooLarge(limit)) : ok(Buffer.concat(chunks))),
    );
    req.on("error", () => resolve(ok(Buffer.concat(chunks))));
  });
}

/** Set apart from writeHead's headers so that the request log can read it back (getHeader). */
function setContentLength(res: ServerResponse, length: number): void {
  res.setHeader("Content-Length", length);
}

const JSON_HEADERS = { "Content-Type": "application/json", "Cache-Control": "no-cache, private" };
const PROTOBUF_HEADERS = {
  "Content-Type": PROTOBUF_MEDIA_TYPE,
  "Cache-Control": "no-cache, private",
};

/** Answers `body` (already serialised, or a value to serialise) as application/json. */
export function sendJson(
  res: ServerResponse,
  code: number,
  body: string | object,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  setContentLength(res, Buffer.byteLength(text));
  res.writeHead(code, { ...JSON_HEADERS, ...headers });
  res.end(text);
}

/**
 * Writes a body given as pieces, in order under one Content-Length: large bodies are never joined
 * into one string or buffer.
 */
function sendParts(
  res: ServerResponse,
  code: number,
  parts: readonly Buffer[],
  headers: Readonly<Record<string, string>>,
): void {
  if (res.headersSent || res.destroyed) return;
  let length = 0;
  for (const p of parts) length += p.length;
  setContentLength(res, length);
  res.writeHead(code, headers);
  res.cork();
  for (const p of parts) res.write(p);
  res.uncork();
  res.end();
}

/** Answers a JSON body given as pieces. */
export function sendJsonParts(res: ServerResponse, code: number, parts: readonly Buffer[]): void {
  sendParts(res, code, parts, JSON_HEADERS);
}

/** Answers a protobuf body (the `k8s\0` envelope and what it holds) given as pieces. */
export function sendProtobuf(
  res: ServerResponse,
  code: number,
  parts: readonly Buffer[],
  headers: Readonly<Record<string, string>> = {},
): void {
  sendParts(res, code, parts, { ...PROTOBUF_HEADERS, ...headers });
}

/**
 * The responses whose request negotiated protobuf. Errors are answered from many places (handlers,
 * injected faults, a crash), each holding only the response, so the choice travels with it.
 */
const protobufErrors = new WeakSet<ServerResponse>();

/** From now on this response's Status errors are protobuf, as ErrorNegotiated answers them. */
export function answerErrorsInProtobuf(res: ServerResponse): void {
  protobufErrors.add(res);
}

/** Answers a Status error with its code and any headers it carries (Retry-After). */
export function sendError(
  res: ServerResponse,
  e: StatusFailure,
  headers: Readonly<Record<string, string>> = {},
): void {
  const all = { ...headers, ...e.headers };
  if (protobufErrors.has(res)) {
    sendProtobuf(res, e.status.code, envelopeParts("Status", [encodeStatus(e.status)]), all);
  } else {
    sendJson(res, e.status.code, e.status, all);
  }
}

/** Answers plain text, as the health endpoints and unknown non-API paths do. */
export function sendText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  setContentLength(res, Buffer.byteLength(text));
  res.writeHead(code, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(text);
}

/** A request's query parameters. */
export type Query = Readonly<Record<string, string>>;

/**
 * The query string as a map; a repeated parameter keeps its first value, as Go's url.Values.Get
 * does.
 */
export function queryOf(url: URL): Query {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (!(k in out)) out[k] = v;
  return out;
}

/**
 * Go's strconv.ParseBool, which the API server uses for `watch`, `allowWatchBookmarks`, `force`.
 */
export function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
  return undefined;
}
