/**
 * Request and response plumbing shared by every handler: bodies, JSON answers, Status errors, query
 * strings.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
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
 * Answers a JSON body given as pieces, written in order under one Content-Length: large bodies are
 * never joined into one string or buffer.
 */
export function sendJsonParts(res: ServerResponse, code: number, parts: readonly Buffer[]): void {
  if (res.headersSent || res.destroyed) return;
  let length = 0;
  for (const p of parts) length += p.length;
  setContentLength(res, length);
  res.writeHead(code, JSON_HEADERS);
  res.cork();
  for (const p of parts) res.write(p);
  res.uncork();
  res.end();
}

/** Answers a Status error with its code and any headers it carries (Retry-After). */
export function sendError(
  res: ServerResponse,
  e: StatusFailure,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendJson(res, e.status.code, e.status, { ...headers, ...e.headers });
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

interface MediaRange {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Splits an Accept header into media ranges with their parameters. */
function parseAccept(accept: string | undefined): MediaRange[] {
  return (accept ?? "")
    .split(",")
    .map((part) => {
      const [type = "", ...params] = part.split(";").map((s) => s.trim());
      return {
        type: type.toLowerCase(),
        params: Object.fromEntries(
          params.map((p) => {
            const i = p.indexOf("=");
            return i < 0 ? [p, ""] : [p.slice(0, i).trim(), p.slice(i + 1).trim()];
          }),
        ),
      };
    })
    .filter((m) => m.type !== "");
}

/** What representation a client's Accept header lets this server answer with. */
type Representation = "json" | "table" | "none";

/**
 * Picks the first acceptable representation in the client's order: a meta.k8s.io Table when asked
 * for one (kubectl get), plain JSON otherwise. Protobuf is never served; aggregated discovery falls
 * through to the plain JSON entry kubectl also lists.
 */
export function negotiate(accept: string | undefined, tableAllowed: boolean): Representation {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return "json";
  for (const r of ranges) {
    const isJson = r.type === "application/json" || r.type === "*/*" || r.type === "application/*";
    if (!isJson) continue;
    const as = r.params.as;
    if (as === undefined) return "json";
    if (as === "Table" && tableAllowed && r.params.g === "meta.k8s.io" && r.params.v === "v1")
      return "table";
  }
  return "none";
}
