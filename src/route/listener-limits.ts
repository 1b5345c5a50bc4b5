// How long a client may hold the data listener, and how many may at once. Headers and request
// timeouts are enforced by a sweep Node runs every `checkIntervalMs` over the connections in the
// middle of a request (a connection that has sent nothing yet counts as one), so they cost no
// work per request and apply everywhere. An idle timeout on kept-alive connections is a socket
// timer refreshed on every read and write, which ADR 36 keeps off the data path; it is worth
// that cost only where a client other than the co-located data plane can connect.

import type { ServerOptions } from "node:http";
import { isIPv4 } from "node:net";

/** The limits of one listener. */
export interface ListenerLimits {
  /** At this many open connections, each new one closes the longest-idle one (ADR 49). */
  readonly maxConnections: number;
  /** A request whose headers have not all arrived this long after it began is answered 408. */
  readonly headersTimeoutMs: number;
  /** A request not received whole (body included) this long after it began is answered 408. */
  readonly requestTimeoutMs: number;
  /** A kept-alive connection idle this long is closed; 0: never (ADR 36). */
  readonly idleTimeoutMs: number;
  /** How often the headers and request timeouts are checked: their granularity. */
  readonly checkIntervalMs: number;
}

/** The data listener's defaults: a data plane's pool fits many times over. */
export const DATA_LISTENER_DEFAULTS = {
  maxConnections: 1024,
  headersTimeoutSeconds: 10,
  /** Off loopback only; on loopback, none (ADR 36). */
  idleTimeoutSeconds: 30,
} as const;

const REQUEST_TIMEOUT_MS = 30_000;
const CHECK_INTERVAL_MS = 1_000;

/** Whether `host` names this machine's loopback interface only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice("::ffff:".length) : h;
  return isIPv4(v4) && v4.startsWith("127.");
}

/**
 * The data listener's limits for its address and flags. `idleTimeoutSeconds` undefined: the
 * default for the address (none on loopback, `DATA_LISTENER_DEFAULTS.idleTimeoutSeconds` off it).
 */
export function dataListenerLimits(o: {
  readonly host: string;
  readonly maxConnections: number;
  readonly headersTimeoutSeconds: number;
  readonly idleTimeoutSeconds: number | undefined;
}): ListenerLimits {
  const idle =
    o.idleTimeoutSeconds ??
    (isLoopbackHost(o.host) ? 0 : DATA_LISTENER_DEFAULTS.idleTimeoutSeconds);
  const headersTimeoutMs = o.headersTimeoutSeconds * 1000;
  return {
    maxConnections: o.maxConnections,
    headersTimeoutMs,
    requestTimeoutMs: Math.max(REQUEST_TIMEOUT_MS, headersTimeoutMs),
    idleTimeoutMs: idle * 1000,
    checkIntervalMs: Math.min(CHECK_INTERVAL_MS, headersTimeoutMs),
  };
}

/** The loopback defaults, for a data listener given no flags. */
export const LOOPBACK_LIMITS: ListenerLimits = dataListenerLimits({
  host: "127.0.0.1",
  maxConnections: DATA_LISTENER_DEFAULTS.maxConnections,
  headersTimeoutSeconds: DATA_LISTENER_DEFAULTS.headersTimeoutSeconds,
  idleTimeoutSeconds: undefined,
});

/**
 * The options of `createServer` that carry `limits`; `maxConnections` is `capConnections`'s.
 * The timeout sweep starts when the server listens.
 */
export function serverOptions(limits: ListenerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
    keepAliveTimeout: limits.idleTimeoutMs,
  };
}
