// The handlers that answer a request in the zero-hop Caddy routes (caddy-routes.ts): the refusals
// hop mode's Caddyfile passes on, and the proxy to an App's upstream with the App's headers and
// credential.

import { DEFAULT_RETRY_AFTER } from "../answers/route-answer.ts";
import type { NotRoutedReason } from "./table.ts";

/** A Caddy JSON object. */
export type Json = { readonly [key: string]: unknown };

/** 400 `bad-host`: the Host is no name `/v1/route` could look up. */
export const badHost: Json = {
  handler: "static_response",
  status_code: 400,
  headers: { "X-Mirror-Reason": ["bad-host"] },
};

/** 404 `unknown-host`: no exact name and no wildcard serves the Host. */
export const unknownHost: Json = {
  handler: "static_response",
  status_code: 404,
  headers: { "X-Mirror-Reason": ["unknown-host"] },
};

/** 502: the App's upstream is not `http://host[:port]`, so the proxy has nowhere to connect. */
export const noHttpUpstream: Json = {
  handler: "static_response",
  status_code: 502,
  headers: { "Content-Type": ["text/plain"] },
  body: "app has no http upstream",
};

/**
 * 503 for an App not routed for `reason`, with `x-mirror-app` `app` (a name or a placeholder) and,
 * unless only the operator ends it (`credentials-off`), `retry-after`: as `tableAnswer` says.
 */
export function notRouted(reason: NotRoutedReason, app: string): Json {
  const retryAfter = String(DEFAULT_RETRY_AFTER.secretUnavailable);
  return {
    handler: "static_response",
    status_code: 503,
    headers: {
      "X-Mirror-Reason": [reason],
      ...(reason === "credentials-off" ? {} : { "Retry-After": [retryAfter] }),
      "X-Mirror-App": [app],
    },
  };
}

/** Drops every `X-Mirror-*` the client sent: only the App's own may reach the upstream. */
export const stripMirrorHeaders: Json = {
  handler: "headers",
  request: { delete: ["X-Mirror-*"] },
};

/**
 * The header an App without a credential sets where the others set `Authorization` (a `map` in
 * a group that mixes both gives the name): `setAuthorization`'s delete drops it at once, and the
 * client's own `Authorization` goes on unchanged.
 */
export const NO_CREDENTIAL = "X-Mirror-No-Credential";

/**
 * `stripMirrorHeaders` that first sets `name: value`, each a value or a placeholder: `Authorization`
 * and the App's credential (in place of every `Authorization` the client sent), or NO_CREDENTIAL,
 * which the delete removes. Caddy 2.6 runs a `headers` handler's set before its delete (tried).
 */
export function setAuthorization(name: string, value: string): Json {
  return { handler: "headers", request: { set: { [name]: [value] }, delete: ["X-Mirror-*"] } };
}

/**
 * `text` as a header value or a `map` output, which Caddy reads for `{placeholders}`, must hold it
 * to give it back: with a `{`, every brace escaped with a backslash (Caddy drops the backslash,
 * keeping any before it); without, as it is (Caddy does not scan a text without a `{`). Tried on
 * 2.6.2 with `{http.request.uri}`, `\{`, `\}` and a lone `}`.
 */
export const caddyLiteral = (text: string): string =>
  text.includes("{") ? text.replace(/[{}]/g, "\\$&") : text;

/** Where and as what a routed request goes; each a value or a placeholder. */
export interface ProxyTarget {
  /** `host:port`. */
  readonly dial: string;
  readonly app: string;
  /** `x-mirror-upstream` as `/v1/route` sends it. */
  readonly upstream: string;
  readonly revision: string;
}

/**
 * The proxy to `target` with the App's headers. The Host goes on as the client sent it: a route
 * that rewrote it for a lookup left the name it wrote in `mirror_key` and the client's in
 * `mirror_host`; on the fast path neither is set and the replacement ("" by "") changes nothing,
 * which costs less than one more handler keeping the client's Host on every request. An upstream
 * that echoes `X-Mirror-Credential` back does not reach the client (defence in depth).
 */
export function proxyTo(target: ProxyTarget): Json {
  return {
    handler: "reverse_proxy",
    upstreams: [{ dial: target.dial }],
    headers: {
      request: {
        set: {
          "X-Mirror-App": [target.app],
          "X-Mirror-Revision": [target.revision],
          "X-Mirror-Upstream": [target.upstream],
        },
        replace: {
          Host: [{ search: "{http.vars.mirror_key}", replace: "{http.vars.mirror_host}" }],
        },
      },
      response: { delete: ["X-Mirror-Credential"] },
    },
  };
}
