// Reading an API server's answer: a whole body under a cap, and an error answer as an ApiError.

import type http from "node:http";
import { parseJson } from "../../json.ts";
import { err, ok, type Result } from "../../result.ts";
import type { ApiError, ApiStatus } from "../cache/list-watch.ts";
import { decodeStatusBody } from "../codec/protobuf-objects.ts";
import { isProtobuf } from "../codec/protobuf-wire.ts";
import { decodeStatus } from "../codec/wire.ts";

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** No body. */
export const EMPTY = Buffer.alloc(0);

/** Reads a whole body, up to limit bytes. */
export function readBody(
  req: http.ClientRequest,
  res: http.IncomingMessage,
  limit: number,
  signal: AbortSignal,
): Promise<Result<Buffer, ApiError>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const settle = (r: Result<Buffer, ApiError>): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      resolve(r);
    };
    const onAbort = (): void => {
      req.destroy();
      settle(err({ kind: "aborted" }));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    res.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        req.destroy();
        settle(err({ kind: "decode", message: `response body exceeds ${limit} bytes` }));
        return;
      }
      chunks.push(chunk);
    });
    res.on("end", () => settle(ok(Buffer.concat(chunks, bytes))));
    res.on("error", (e) => settle(err({ kind: "network", message: describe(e) })));
    res.on("close", () => {
      if (!res.complete)
        settle(err({ kind: "network", message: "connection closed before the response ended" }));
    });
  });
}

/**
 * Maps a non-2xx response to an ApiError, reading a Status body when there is one: protobuf when
 * the request accepted it (the API server encodes errors as it would have the answer), else JSON.
 */
export function httpError(res: http.IncomingMessage, body: Buffer): ApiError {
  const status = res.statusCode ?? 0;
  const parsedStatus = body.length === 0 ? undefined : statusOf(res.headers["content-type"], body);
  const header = retryAfterHeader(res.headers["retry-after"]);
  const retryAfterSeconds = header ?? parsedStatus?.retryAfterSeconds;
  const reason = parsedStatus?.reason ?? res.statusMessage;
  return {
    kind: "http",
    status,
    message:
      parsedStatus?.message ?? `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""}`,
    ...(reason === undefined || reason === "" ? {} : { reason }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
}

function statusOf(contentType: string | undefined, body: Buffer): ApiStatus | undefined {
  if (isProtobuf(contentType)) {
    const decoded = decodeStatusBody(body);
    return decoded.ok ? decoded.value : undefined;
  }
  const json = parseJson("error body", body.toString("utf8"));
  const decoded = json.ok ? decodeStatus(json.value) : undefined;
  return decoded?.ok ? decoded.value : undefined;
}

/** Retry-After as delay-seconds; the API server never sends the HTTP-date form. */
function retryAfterHeader(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number.parseInt(value, 10);
}
