// Generated HTTP/1.x requests for the data listener, assembled from their parts; each says
// whether Node's parser accepts it, whether its connection may be reused and, for a route request
// whose host is known, the exact answer (the oracle, http-oracle.ts, judges the rest).

import fc from "fast-check";
import { body, extraHeader } from "./http-headers.ts";
import { hostHeaders, type Outcome, ROUTED_REQUEST } from "./http-hosts.ts";
import { method, NODE_METHODS, target, version } from "./http-request-line.ts";

/** A generated request. `wellFormed`: built only from parts Node's parser accepts. */
export interface FuzzRequest {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly eol: string;
  readonly wellFormed: boolean;
  /** Whether the connection may carry another request after this one. */
  readonly reusable: boolean;
  /** For a well-formed route request whose host is known: the exact answer. */
  readonly outcome?: Outcome;
}

/** The request's bytes: every string is latin1, as Node reads header bytes. */
export function serialise(r: FuzzRequest): Buffer {
  const line =
    r.version === "" ? `${r.method} ${r.target}` : `${r.method} ${r.target} ${r.version}`;
  const head = [line, ...r.headers.map(([n, v]) => `${n}: ${v}`)].join(r.eol);
  return Buffer.from(`${head}${r.eol}${r.eol}${r.body}`, "latin1");
}

/** Node's default limit on a request's head (`--max-http-header-size`); past it, a 431. */
const NODE_HEADER_LIMIT = 16 * 1024;

/** A short readable rendering for failure messages. */
export function describeRequest(r: FuzzRequest): string {
  return JSON.stringify(serialise(r).toString("latin1").slice(0, 600));
}

/** Any request, weighted towards well-formed ones on kept-alive connections. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method,
    target,
    version,
    host: hostHeaders,
    extras: fc.array(extraHeader, { maxLength: 3 }),
    body,
    lf: fc.oneof(
      { weight: 40, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    shuffle: fc.boolean(),
  })
  .map(({ method: m, target: t, version: v, host, extras, body: b, lf, shuffle }) => {
    const rest = [...extras.flatMap((e) => e.headers), ...b.headers];
    const headers = shuffle ? [...rest, ...host.headers] : [...host.headers, ...rest];
    const methodOk = NODE_METHODS.includes(m);
    // Extras add up: three lists of many headers pass Node's limit together. Within a KiB of it,
    // Node's own count decides, so such a request may get a 431 and is not called well-formed.
    const headBytes = headers.reduce((n, [name, value]) => n + name.length + value.length + 4, 0);
    const wellFormed =
      headBytes < NODE_HEADER_LIMIT - 1024 &&
      methodOk &&
      t.wellFormed &&
      v.wellFormed &&
      host.wellFormed &&
      extras.every((e) => e.wellFormed) &&
      b.wellFormed &&
      !lf;
    const reusable =
      wellFormed && v.version === "HTTP/1.1" && extras.every((e) => e.reusable) && b.reusable;
    const absolute = t.target.startsWith("http:");
    const isRoute = t.family === "route";
    // An absolute-form target's authority stands for Host; X-Forwarded-Host and two Host lines
    // still decide.
    const routedRequest = headers.some(([n]) => n.toLowerCase() === "x-mirror-app");
    const outcome = routedRequest
      ? ROUTED_REQUEST
      : absolute
        ? host.authorityWins
          ? t.authority
          : host.outcome
        : host.outcome;
    const request = {
      method: m,
      target: t.target,
      version: v.version,
      headers,
      body: b.body,
      eol: lf ? "\n" : "\r\n",
      wellFormed,
      reusable,
      ...(isRoute && outcome !== undefined ? { outcome } : {}),
    };
    // fast-check prints a counterexample with this: the bytes, cut short.
    return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
  });
