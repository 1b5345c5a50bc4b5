// The error catalogue of the data listener: every code it answers with, its HTTP status, and what
// it tells an operator. Route answers carry the code in `x-mirror-reason`; JSON answers in `error`.

/** Why `/v1/route` did not route a request: the value of `x-mirror-reason`. */
export type RouteReason =
  | "secret-unavailable"
  | "secret-unusable"
  | "credentials-off"
  | "not-synced"
  | "unknown-host"
  | "bad-host"
  | "routed-request";

/** How `/v1/route` answered one request: the `outcome` label of the route-answer counter. */
export type RouteOutcome = "routed" | RouteReason;

export const ROUTE_OUTCOMES: readonly RouteOutcome[] = [
  "routed",
  "secret-unavailable",
  "not-synced",
  "unknown-host",
  "bad-host",
  "secret-unusable",
  "credentials-off",
  "routed-request",
];

interface ErrorEntry {
  readonly status: number;
  readonly message: string;
}

export const ERRORS = {
  "not-synced": {
    status: 503,
    message:
      "no Snapshot published yet: the first list of the Registry and App Secrets is not complete",
  },
  "secret-unavailable": {
    status: 503,
    message:
      "the App exists but this replica does not see its Secret bytes (Secret absent, key missing or value empty)",
  },
  "secret-unusable": {
    status: 503,
    message:
      "the App has a credential and its Secret's value cannot be an Authorization header: over 8192 bytes, or a byte other than visible ASCII, space and tab",
  },
  "credentials-off": {
    status: 503,
    message:
      "the App has a credential and this sidecar does not serve credentials (--serve-credentials)",
  },
  "routed-request": {
    status: 403,
    message:
      "the request carries x-mirror-app, so a data plane routed it here (an upstream that resolves to the pod): it must not read another App's credential",
  },
  "unknown-host": { status: 404, message: "no App serves this host" },
  "bad-host": {
    status: 400,
    message:
      "the host is missing, empty, sent twice, not a hostname, or an IP literal; X-Forwarded-Host wins over Host when present",
  },
  "unknown-app": { status: 404, message: "no App has this name" },
  "not-found": { status: 404, message: "no such endpoint" },
  "bad-request": { status: 400, message: "the request could not be understood" },
  internal: { status: 500, message: "a bug: the error is logged" },
} as const satisfies Readonly<Record<string, ErrorEntry>>;
