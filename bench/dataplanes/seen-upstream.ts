// The rotation phase's upstream: every App's, answering each request 200 with
// `x-seen-authorization`, a short digest of the `Authorization` values it received ("none"
// without one). A probe through a proxy then tells which credential reached the upstream, and the
// values never leave the processes that hold them: the bench compares digests, and prints none.
// Node rather than nginx, which cannot digest a header without a module; it runs in its own
// process (`node seen-upstream.ts PORT`), so that it does not share the bench's event loop with
// envtest and the probes. The load phases keep their nginx upstream.

import { createHash } from "node:crypto";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { freePort } from "../child.ts";
import { type ProxyProcess, startProxy } from "./proxy-process.ts";

/** The answer header holding the digest. */
export const SEEN_HEADER = "x-seen-authorization";

/**
 * What the upstream answers for the `Authorization` values of one request: "none", or the first
 * 16 hex digits of each value's SHA-256, comma-separated (a proxy that adds a second header
 * rather than replacing the client's shows as two).
 */
export function authorizationDigest(values: readonly string[]): string {
  if (values.length === 0) return "none";
  return values.map((v) => createHash("sha256").update(v).digest("hex").slice(0, 16)).join(",");
}

/** The running upstream. */
export interface SeenUpstream {
  /** `http://127.0.0.1:PORT`, every App's `upstream`. */
  readonly url: string;
  readonly process: ProxyProcess;
  stop(): Promise<void>;
}

/** Starts the upstream in a child process of the same Node. */
export async function startSeenUpstream(): Promise<SeenUpstream> {
  const port = await freePort();
  const child = await startProxy({
    name: "upstream revealing Authorization digests",
    command: process.execPath,
    args: [fileURLToPath(import.meta.url), String(port)],
    port,
  });
  return { url: `http://127.0.0.1:${port}`, process: child, stop: () => child.stop() };
}

function serve(port: number): void {
  const server = http.createServer((req, res) => {
    res.setHeader(SEEN_HEADER, authorizationDigest(req.headersDistinct.authorization ?? []));
    res.setHeader("content-type", "text/plain");
    res.end("ok\n");
  });
  // The proxies keep their upstream connections; an idle one closed under them would answer 502.
  server.keepAliveTimeout = 0;
  server.listen(port, "127.0.0.1");
}

if (import.meta.url === `file://${process.argv[1]}`) serve(Number(process.argv[2]));
