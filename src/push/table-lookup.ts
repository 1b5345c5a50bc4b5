// How a proxy answers a request from its zero-hop table: the algorithm every zero-hop
// configuration implements (HAProxy rules, Caddy routes, nginx Lua), written once as a pure
// function so that a test can hold it to `/v1/route` (test/push/table.test.ts).

import { ERRORS } from "../answers/reasons.ts";
import { DEFAULT_RETRY_AFTER, type RouteAnswer } from "../answers/route-answer.ts";
import type { RoutingTable, TableEntry } from "./table.ts";

// What the proxy strips before the exact lookup: one trailing dot and a port, both optional.
const TAIL = /\.?(?::[0-9]{1,5})?$/;
// The request hosts `/v1/route` accepts, lower-cased: `[a-z0-9_-]` labels of 1–63 characters,
// one optional trailing dot, an optional port of 1–5 digits. The name itself is at most
// MAX_HOST characters (checked on the stripped form).
const VALID = /^(?:[a-z0-9_-]{1,63}\.)*[a-z0-9_-]{1,63}\.?(?::[0-9]{1,5})?$/;
const MAX_HOST = 253;
// A stripped host whose last label is a number (decimal digits, or 0x and hex digits): an IPv4
// address to a URL parser, in any of its spellings (`10.0.0.12`, `127.1`, `0x7f.1`).
const ENDS_IN_NUMBER = /(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)$/;

/** What the proxy knows of one request's host: its one Host value, or null (none, or two). */
export type ProxyHost = string | null;

/**
 * The answer a proxy gives from `table` (null: nothing pushed yet) for a request whose Host is
 * `host`, as `/v1/route` would give it: not-synced first; then an exact hostname (the Host
 * lower-cased, one trailing dot and a port stripped); then a bad host (anything `/v1/route`
 * refuses, a name whose last label is a number among them); then the longest wildcard suffix
 * with at least one label above it; else unknown. The exact lookup may come before the check for
 * a bad host because no bad host strips to a Registry hostname: those are valid, lower-case, at
 * most 253 characters, and never end in a number.
 */
export function tableAnswer(table: RoutingTable | null, host: ProxyHost): RouteAnswer {
  if (table === null) return refused("not-synced");
  if (host === null) return refused("bad-host");
  const lowered = asciiLower(host);
  const key = lowered.replace(TAIL, "");
  const exact = table.exact.get(key);
  if (exact !== undefined) return answerOf(exact, table.revision);
  if (!VALID.test(lowered) || key.length > MAX_HOST || ENDS_IN_NUMBER.test(key))
    return refused("bad-host");
  for (let dot = key.indexOf("."); dot !== -1; dot = key.indexOf(".", dot + 1)) {
    const entry = table.wildcard.get(key.slice(dot + 1));
    if (entry !== undefined) return answerOf(entry, table.revision);
  }
  return refused("unknown-host");
}

/** Lower-cases ASCII letters only, as every proxy's converter does (`lower`, `lowerAscii`). */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function answerOf(entry: TableEntry, revision: number): RouteAnswer {
  if (entry.kind === "not-routed") {
    const { reason } = entry;
    return {
      outcome: reason,
      status: ERRORS[reason].status,
      headers: {
        // Only the operator ends credentials-off: asking again sooner changes nothing.
        ...(reason === "credentials-off"
          ? {}
          : { "retry-after": String(DEFAULT_RETRY_AFTER.secretUnavailable) }),
        "x-mirror-reason": reason,
        "x-mirror-app": entry.app,
        "content-length": "0",
      },
    };
  }
  return {
    outcome: "routed",
    status: 200,
    headers: {
      "x-mirror-app": entry.app,
      ...(entry.upstream === null ? {} : { "x-mirror-upstream": entry.upstream }),
      "x-mirror-revision": String(revision),
      "content-length": "0",
      ...(entry.credential === null ? {} : { "x-mirror-credential": entry.credential }),
    },
  };
}

function refused(reason: "not-synced" | "bad-host" | "unknown-host"): RouteAnswer {
  return {
    outcome: reason,
    status: ERRORS[reason].status,
    headers: {
      ...(reason === "not-synced" ? { "retry-after": String(DEFAULT_RETRY_AFTER.notSynced) } : {}),
      "x-mirror-reason": reason,
      "content-length": "0",
    },
  };
}
