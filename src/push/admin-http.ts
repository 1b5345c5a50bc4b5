// One request to a proxy's HTTP runtime interface (Caddy's admin API, nginx's push listener):
// its status and body, or why there is none, as a PushFailure.

import { err, ok, type Result } from "../result.ts";
import type { PushFailure } from "./target.ts";

export interface AdminAnswer {
  readonly status: number;
  readonly text: string;
}

/** Sends one request; `timeout` after `timeoutMs`, `unreachable` when refused. Never rejects. */
export async function adminCall(
  url: string,
  timeoutMs: number,
  init: RequestInit & { readonly method: string },
): Promise<Result<AdminAnswer, PushFailure>> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return ok({ status: response.status, text: await response.text() });
  } catch (e) {
    const error = e as Error & { cause?: { code?: string } };
    if (error.name === "TimeoutError") {
      return err({
        reason: "timeout",
        message: `${init.method} ${url}: no answer in ${timeoutMs} ms`,
      });
    }
    const code = error.cause?.code;
    const reason = code === "ECONNREFUSED" ? "unreachable" : "protocol";
    return err({ reason, message: `${init.method} ${url}: ${code ?? error.message}` });
  }
}

/** The proxy's refusal: the request, its status and the start of its answer. */
export function adminRefused(what: string, answer: AdminAnswer): Result<never, PushFailure> {
  return err({
    reason: "rejected",
    message: `${what}: ${answer.status} ${answer.text.slice(0, 300)}`,
  });
}
