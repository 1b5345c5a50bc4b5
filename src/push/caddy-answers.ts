// The handlers that answer a request in the zero-hop Caddy routes (caddy-routes.ts): the refusals
// hop mode's Caddyfile passes on, and the proxy to an App's upstream with the App's headers.

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

/** 503 `secret-unavailable` for `app` (a name or a placeholder). */
export function secretUnavailable(app: string): Json {
  return {
    handler: "static_response",
    status_code: 503,
    headers: {
      "X-Mirror-Reason": ["secret-unavailable"],
      "Retry-After": ["5"],
      "X-Mirror-App": [app],
    },
  };
}

/** Drops every `X-Mirror-*` the client sent: only the App's own may reach the upstream. */
export const stripMirrorHeaders: Json = {
  handler: "headers",
  request: { delete: ["X-Mirror-*"] },
};

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
 * which costs less than one more handler keeping the client's Host on every request.
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
    },
  };
}
