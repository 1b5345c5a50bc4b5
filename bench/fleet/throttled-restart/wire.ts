// What the standalone API server (fake-api.ts) writes and reads as kube-apiserver does: Status
// answers, JSON bodies, bookmarks, its continue tokens, and who a request came from.

import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";

const TOKEN_PREFIX = "envtest-token.";

/** The client a bench kubeconfig's token names (the fleet's replicas.ts writes them). */
export function clientOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7).trim() : "";
  if (token.startsWith(TOKEN_PREFIX)) {
    try {
      return decodeURIComponent(token.slice(TOKEN_PREFIX.length));
    } catch {
      // A malformed escape names no client.
    }
  }
  return req.headers["user-agent"] ?? "unknown";
}

/** What every metav1.Status of a failure holds. */
const FAILURE = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure" } as const;

/** A metav1.Status, as kube-apiserver answers a failure (a Retry-After in its details). */
export function status(code: number, reason: string, message: string, retryAfterSeconds?: number) {
  const details = retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } };
  return { ...FAILURE, message, reason, ...details, code };
}

/** A whole JSON answer. */
export function send(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A BOOKMARK event; the initial-events-end one ends a streaming list's initial events. */
export const bookmark = (rv: number, initialEventsEnd: boolean) => ({
  type: "BOOKMARK",
  object: {
    kind: "Secret",
    apiVersion: "v1",
    metadata: {
      resourceVersion: String(rv),
      ...(initialEventsEnd ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
    },
  },
});

/** Where a continue token (this server's own, base64url JSON) resumes a paged list. */
const continueToken = z.object({ rv: z.number(), after: z.string() });

/** The token's position; undefined when it is not one of this server's. */
export function continuation(token: string): z.infer<typeof continueToken> | undefined {
  try {
    const parsed = continueToken.safeParse(JSON.parse(Buffer.from(token, "base64url").toString()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
