// Generated HTTP/1.x requests for the data listener, and the oracle that says which answers the
// contract (SPEC §4, README "The routing contract") allows for each.
//
// Answers allowed, decided here once:
// - `/v1/route`, `/v1/route/*` (also with a query or fragment), any method Node parses except
//   CONNECT: exactly 200 (empty body, x-mirror-app, x-mirror-revision, x-mirror-upstream when the
//   App has one), 503 (x-mirror-reason secret-unavailable with x-mirror-app, or not-synced; and
//   retry-after), 404 (x-mirror-reason unknown-host) or 400 (x-mirror-reason bad-host); the body
//   is always empty and x-mirror-reason appears at most once.
// - `/v1/hosts/*`, `/v1/apps[/*]`, `/v1/snapshot` with GET or HEAD: 200, 400, 404 or 503 with a
//   JSON body whose `error` is a catalogued code; every other path, or another method there: 404
//   `{"error":"not-found"}` or 400 `{"error":"bad-request"}`.
// - At the protocol level, for a request Node's parser refuses (bad request line or version,
//   control characters, malformed framing, headers over 16 KiB): Fastify's client-error answer,
//   400 or 431 with the body `{"error":"...","message":"Client Error","statusCode":...}`, then the
//   connection closes. Node's 417 for an `Expect` other than 100-continue, and its interim
//   100 Continue for 100-continue. A CONNECT request gets no answer: Node closes the connection
//   (no 'connect' listener). Node never sent 505 here: HTTP/2.0 and HTTP/0.9 request lines are
//   answered as HTTP/1.x, other versions are a 400; 505 is therefore not allowed.
// - Never: a 5xx other than 503, a 503 outside the route and lookup API, no answer within 5 s,
//   an answer on a closed connection for a well-formed keep-alive request, Secret bytes anywhere.

import http from "node:http";
import fc from "fast-check";
import type { Exchange, RawResponse } from "../../support/raw-http.ts";
import { header, headerCount } from "../../support/raw-http.ts";

/** The Apps the fuzzed sidecar serves (see `fuzzWorld`); `ready` says whether its Secret exists. */
export interface WorldApp {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secret: string;
  readonly upstream?: string;
  readonly ready: boolean;
}

/** Markers stored as Secret values: no answer may contain them, raw or base64. */
export const SECRET_VALUES = {
  shop: "S3CR3T-shop-q7Vx2mKp9LwZ",
  wild: "S3CR3T-wild-Hn4Rt8YcB1sJ",
  idn: "S3CR3T-idn-Ue6Gd0FaXo3N",
} as const;

export const WORLD_APPS: readonly WorldApp[] = [
  {
    name: "shop",
    hostnames: ["shop.example.com", "*.shop.example.com"],
    secret: "shop-credentials",
    upstream: "http://shop.tenant-a.svc.cluster.local:8080",
    ready: true,
  },
  { name: "blog", hostnames: ["blog.example.com"], secret: "blog-credentials", ready: false },
  {
    name: "wild",
    hostnames: ["*.apps.example.net"],
    secret: "wild-credentials",
    // Not visible ASCII: the header carries it percent-encoded.
    upstream: "http://wild.svc/ä b",
    ready: true,
  },
  {
    name: "idn",
    hostnames: ["bücher.example"],
    secret: "idn-credentials",
    ready: true,
  },
];

export const FORBIDDEN: readonly string[] = Object.values(SECRET_VALUES).flatMap((v) => [
  v,
  Buffer.from(v).toString("base64"),
]);

/** What `/v1/route` must answer for a host whose fate is known. */
export type Outcome =
  | { readonly status: 200; readonly app: string }
  | { readonly status: 503; readonly reason: "secret-unavailable"; readonly app: string }
  | { readonly status: 404; readonly reason: "unknown-host" }
  | { readonly status: 400; readonly reason: "bad-host" };

const routed = (app: string): Outcome => ({ status: 200, app });
const UNKNOWN: Outcome = { status: 404, reason: "unknown-host" };
const BAD: Outcome = { status: 400, reason: "bad-host" };
const UNAVAILABLE = (app: string): Outcome => ({
  status: 503,
  reason: "secret-unavailable",
  app,
});

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

/** A short readable rendering for failure messages. */
export function describeRequest(r: FuzzRequest): string {
  return JSON.stringify(serialise(r).toString("latin1").slice(0, 600));
}

// --- hosts -------------------------------------------------------------------------------------

interface HostValue {
  readonly value: string;
  readonly outcome?: Outcome;
  readonly wellFormed: boolean;
}

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const flipCase = (s: string, mask: number) =>
  [...s].map((c, i) => ((mask >> (i % 31)) & 1 ? c.toUpperCase() : c)).join("");
/** Variants the lookup must not tell apart: case, one trailing dot, a port. */
const variant = (host: string) =>
  fc
    .tuple(
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.boolean(),
      fc.option(fc.integer({ min: 0, max: 65535 })),
    )
    .map(([mask, dot, port]) => {
      let h = flipCase(host, mask);
      if (dot) h += ".";
      if (port !== null) h += `:${port}`;
      return h;
    });

const known = (value: string, outcome: Outcome): fc.Arbitrary<HostValue> =>
  variant(value).map((v) => ({ value: v, outcome, wellFormed: true }));

// Codes Node's parser accepts in a header value (no controls besides HTAB), as latin1.
const valueChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x20) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
);
const anyChar = fc.oneof(
  { weight: 6, arbitrary: valueChar },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }) },
  { weight: 1, arbitrary: fc.constant(0x7f) },
);
const latin1 = (chars: fc.Arbitrary<number>, max: number) =>
  fc.array(chars, { maxLength: max }).map((cs) => String.fromCharCode(...cs));
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls Node refuses in a header value
const isWellFormedValue = (v: string) => !/[\x00-\x08\x0a-\x1f\x7f]/.test(v);

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const hostValue: fc.Arbitrary<HostValue> = fc.oneof(
  w(3, known("shop.example.com", routed("shop"))),
  w(
    3,
    fc
      .array(label, { minLength: 1, maxLength: 3 })
      .chain((ls) => known(`${ls.join(".")}.shop.example.com`, routed("shop"))),
  ),
  w(3, known("blog.example.com", UNAVAILABLE("blog"))),
  w(
    3,
    label.chain((l) => known(`${l}.apps.example.net`, routed("wild"))),
  ),
  w(1, known("apps.example.net", UNKNOWN)),
  w(2, known("xn--bcher-kva.example", routed("idn"))),
  w(
    3,
    fc
      .array(label, { minLength: 1, maxLength: 4 })
      .chain((ls) => known(`${ls.join(".")}.example.org`, UNKNOWN)),
  ),
  w(
    3,
    fc.constantFrom<HostValue>(
      { value: "", outcome: BAD, wellFormed: true },
      { value: "[::1]", outcome: BAD, wellFormed: true },
      { value: "[::1]:8080", outcome: BAD, wellFormed: true },
      { value: "shop.example.com:http", outcome: BAD, wellFormed: true },
      { value: "shop.example.com:123456", outcome: BAD, wellFormed: true },
      { value: "shop..example.com", outcome: BAD, wellFormed: true },
      { value: ".shop.example.com", outcome: BAD, wellFormed: true },
      { value: "shop.example.com..", outcome: BAD, wellFormed: true },
      { value: "%73hop.example.com", outcome: BAD, wellFormed: true },
      { value: "shop.exa mple.com", outcome: BAD, wellFormed: true },
      { value: "sh\xf6p.example.com", outcome: BAD, wellFormed: true },
      { value: "*.shop.example.com", outcome: BAD, wellFormed: true },
      { value: "1.2.3.4", outcome: UNKNOWN, wellFormed: true },
      { value: `${"a".repeat(250)}.com`, outcome: BAD, wellFormed: true },
    ),
  ),
  w(
    2,
    latin1(valueChar, 40).map((value) => ({ value, wellFormed: true })),
  ),
  // Control characters: Node's parser refuses the request.
  w(
    1,
    latin1(anyChar, 40).map((value) => ({ value, wellFormed: isWellFormedValue(value) })),
  ),
);

interface HostHeaders {
  readonly headers: readonly (readonly [string, string])[];
  readonly outcome?: Outcome;
  readonly wellFormed: boolean;
}

const hostName = fc.constantFrom("Host", "host", "HOST", "hOsT");
const xfhName = fc.constantFrom("X-Forwarded-Host", "x-forwarded-host");

const hostHeaders: fc.Arbitrary<HostHeaders> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(hostName, hostValue).map(
      ([n, h]): HostHeaders => ({
        headers: [[n, h.value]],
        outcome: h.outcome,
        wellFormed: h.wellFormed,
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(xfhName, hostValue).map(
      ([n, h]): HostHeaders => ({
        headers: [
          ["Host", "127.0.0.1:8080"],
          [n, h.value],
        ],
        outcome: h.outcome,
        wellFormed: h.wellFormed,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(hostValue, hostValue).map(
      ([a, b]): HostHeaders => ({
        // A list: the first entry is the host asked about (a value with a comma has no outcome).
        headers: [
          ["Host", "blog.example.com"],
          ["X-Forwarded-Host", `${a.value}, ${b.value}`],
        ],
        outcome: a.value.includes(",") || a.value.trim() !== a.value ? undefined : a.outcome,
        wellFormed: a.wellFormed && b.wellFormed,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(hostValue, hostValue).map(
      ([a, b]): HostHeaders => ({
        // Two lines: Node joins them with ", ", so the first line's value is the host.
        headers: [
          ["X-Forwarded-Host", a.value],
          ["X-Forwarded-Host", b.value],
        ],
        outcome:
          a.value.includes(",") || a.value.trim() !== a.value || a.value === ""
            ? undefined
            : a.outcome,
        wellFormed: a.wellFormed && b.wellFormed,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: hostValue.map(
      (h): HostHeaders => ({
        headers: [
          ["Host", h.value],
          ["X-Forwarded-Host", ""],
        ],
        outcome: BAD,
        wellFormed: h.wellFormed,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(hostValue, hostValue).map(
      ([a, b]): HostHeaders => ({
        headers: [
          ["Host", a.value],
          ["host", b.value],
        ],
        outcome: BAD,
        wellFormed: a.wellFormed && b.wellFormed,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant<HostHeaders>({ headers: [], outcome: BAD, wellFormed: true }),
  },
);

// --- request line ------------------------------------------------------------------------------

const NODE_METHODS = http.METHODS.filter((m) => m !== "CONNECT");
const method = fc.oneof(
  { weight: 12, arbitrary: fc.constant("GET") },
  { weight: 2, arbitrary: fc.constantFrom("HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH") },
  { weight: 4, arbitrary: fc.constantFrom(...NODE_METHODS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("CONNECT", "get", "FOO", "G ET", "GET\t", "BREW", "M-SEARCHX"),
  },
);

const unreserved =
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@";
const pchar = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...unreserved) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0")}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("%", "%zz", "%e2%82", "%C3%BC", "%00", "%2F", "..", "//"),
  },
);
const segment = fc.array(pchar, { maxLength: 12 }).map((cs) => cs.join(""));
const segments = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));
const query = fc
  .array(fc.oneof(pchar, fc.constantFrom("/", "?", "=")), { maxLength: 16 })
  .map((cs) => cs.join(""));
const host253 = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("."));

type Family = "route" | "api" | "other";
interface Target {
  readonly target: string;
  readonly family: Family;
  readonly wellFormed: boolean;
}

const target: fc.Arbitrary<Target> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .oneof(
        fc.constant(""),
        fc.constant("/"),
        segments.map((s) => `/${s}`),
        query.map((q) => `?${q}`),
        fc.tuple(segments, query).map(([s, q]) => `/${s}?${q}`),
        fc.constantFrom("#", "#frag", "/#x", "?a=%zz", "/%zz", "/../../v1/apps", "/%2e%2e/apps"),
      )
      .map((suffix) => ({
        target: `/v1/route${suffix}`,
        family: "route" as const,
        wellFormed: true,
      })),
  },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc
          .oneof(
            host253,
            segment,
            fc.constantFrom(
              "shop.example.com",
              "SHOP.example.com.",
              "b%C3%BCcher.example",
              "%zz",
              "[::1]",
              "",
            ),
          )
          .map((h) => `/v1/hosts/${h}`),
        fc.constant("/v1/apps"),
        fc
          .oneof(segment, fc.constantFrom("shop", "blog", "wild", "idn", "nope", "%zz"))
          .map((n) => `/v1/apps/${n}`),
        fc.constantFrom("/v1/snapshot", "/v1/snapshot?x=1", "/v1/apps?x", "/v1/apps/"),
      )
      .map((t) => ({ target: t, family: "api" as const, wellFormed: true })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          "/",
          "*",
          "/healthz",
          "/readyz",
          "/metrics",
          "/v1",
          "/v1/",
          "/v1/routes",
          "/v1/route;x",
          "/v1/route%2f",
          "/v1/ROUTE",
          "//v1/route",
          "/v1//route",
          "/%zz",
          "/v1/hosts",
        ),
        segments.map((s) => `/${s}`),
      )
      .map((t) => ({ target: t, family: "other" as const, wellFormed: true })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Target>(
      // Absolute form: Fastify routes on its path.
      { target: "http://shop.example.com/v1/route", family: "route", wellFormed: true },
      { target: "http://shop.example.com/v1/apps", family: "api", wellFormed: true },
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("/v1/route/", "/v1/hosts/", "/"), latin1(anyChar, 20))
      .map(([p, junk]) => ({ target: `${p}${junk}`, family: "other" as const, wellFormed: false })),
  },
);

const version = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ version: "HTTP/1.1", wellFormed: true }) },
  { weight: 2, arbitrary: fc.constant({ version: "HTTP/1.0", wellFormed: true }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        "HTTP/2.0",
        "HTTP/0.9",
        "HTTP/1.2",
        "HTTP/3.0",
        "http/1.1",
        "HTTP/1.1 ",
        "HTTP/11",
        "",
      )
      .map((v) => ({ version: v, wellFormed: false })),
  },
);

// --- other headers and bodies ------------------------------------------------------------------

interface Extra {
  readonly headers: readonly (readonly [string, string])[];
  readonly wellFormed: boolean;
  readonly reusable: boolean;
}

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,24}$/);
const extraHeader: fc.Arbitrary<Extra> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(token, latin1(valueChar, 60))
      .map(([n, v]): Extra => ({ headers: [[`X-${n}`, v]], wellFormed: true, reusable: true })),
  },
  {
    weight: 5,
    arbitrary: fc
      .constantFrom(
        "gzip",
        "br",
        "gzip, deflate, br, zstd",
        "gzip;q=0, *;q=0",
        "identity",
        "*",
        "x-unknown",
        "",
      )
      .map((v): Extra => ({ headers: [["Accept-Encoding", v]], wellFormed: true, reusable: true })),
  },
  {
    weight: 3,
    arbitrary: latin1(valueChar, 40).map(
      (v): Extra => ({ headers: [["Content-Type", v]], wellFormed: true, reusable: true }),
    ),
  },
  {
    weight: 3,
    arbitrary: latin1(valueChar, 80).map(
      (v): Extra => ({ headers: [["User-Agent", v]], wellFormed: true, reusable: true }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Extra>({
      headers: [["Connection", "close"]],
      wellFormed: true,
      reusable: false,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constant<Extra>({
      headers: [["Connection", "keep-alive"]],
      wellFormed: true,
      reusable: true,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("websocket", "h2c", "foo/1").map(
      (u): Extra => ({
        headers: [
          ["Connection", "Upgrade"],
          ["Upgrade", u],
        ],
        wellFormed: true,
        reusable: false,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("100-continue", "100-Continue", "200-ok", "", "x, 100-continue")
      .map((v): Extra => ({ headers: [["Expect", v]], wellFormed: true, reusable: false })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(token, fc.integer({ min: 2, max: 6 })).map(
      ([n, k]): Extra => ({
        headers: Array.from({ length: k }, (_, i) => [`X-Dup-${n}`, `v${i}`] as const),
        wellFormed: true,
        reusable: true,
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 20, max: 120 }).map(
      (k): Extra => ({
        headers: Array.from({ length: k }, (_, i) => [`X-Many-${i}`, "x".repeat(40)] as const),
        wellFormed: true,
        reusable: true,
      }),
    ),
  },
  {
    // Past Node's 16 KiB header limit: 431.
    weight: 1,
    arbitrary: fc
      .integer({ min: 17_000, max: 40_000 })
      .map(
        (n): Extra => ({ headers: [["X-Big", "b".repeat(n)]], wellFormed: false, reusable: false }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Extra>(
      { headers: [["Bad Name", "x"]], wellFormed: false, reusable: false },
      { headers: [["Bad(Name)", "x"]], wellFormed: false, reusable: false },
      { headers: [["X-Space ", "x"]], wellFormed: false, reusable: false },
      { headers: [["X-Fold", "a\r\n  folded"]], wellFormed: false, reusable: false },
      { headers: [["", "empty name"]], wellFormed: false, reusable: false },
      { headers: [["X-Ctl", "a\x01b"]], wellFormed: false, reusable: false },
      { headers: [["X-Nul", "a\x00b"]], wellFormed: false, reusable: false },
      { headers: [["X-Del", "a\x7fb"]], wellFormed: false, reusable: false },
    ),
  },
);

interface Body {
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly wellFormed: boolean;
  readonly reusable: boolean;
}

const bodyBytes = latin1(fc.integer({ min: 0, max: 255 }), 300);
const chunked = (data: string) => {
  const parts: string[] = [];
  for (let i = 0; i < data.length; i += 97) {
    const piece = data.slice(i, i + 97);
    parts.push(`${piece.length.toString(16)}\r\n${piece}\r\n`);
  }
  return `${parts.join("")}0\r\n\r\n`;
};
const body: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.constant<Body>({ headers: [], body: "", wellFormed: true, reusable: true }),
  },
  {
    weight: 2,
    arbitrary: bodyBytes.map(
      (b): Body => ({
        headers: [["Content-Length", String(b.length)]],
        body: b,
        wellFormed: true,
        reusable: true,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(bodyBytes, fc.constantFrom("gzip", "br", "x-garbage")).map(
      ([b, enc]): Body => ({
        headers: [
          ["Content-Encoding", enc],
          ["Content-Length", String(b.length)],
        ],
        body: b,
        wellFormed: true,
        reusable: true,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: bodyBytes.map(
      (b): Body => ({
        headers: [["Transfer-Encoding", "chunked"]],
        body: chunked(b),
        wellFormed: true,
        reusable: true,
      }),
    ),
  },
  {
    // Announced, not sent: the route answers before the body; nothing else waits for it either.
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 2 ** 30 }).map(
      (n): Body => ({
        headers: [["Content-Length", String(n)]],
        body: "",
        wellFormed: true,
        reusable: false,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Body>(
      { headers: [["Content-Length", "-1"]], body: "", wellFormed: false, reusable: false },
      { headers: [["Content-Length", "abc"]], body: "", wellFormed: false, reusable: false },
      {
        headers: [
          ["Content-Length", "1"],
          ["Content-Length", "2"],
        ],
        body: "ab",
        wellFormed: false,
        reusable: false,
      },
      {
        headers: [
          ["Content-Length", "3"],
          ["Transfer-Encoding", "chunked"],
        ],
        body: "0\r\n\r\n",
        wellFormed: false,
        reusable: false,
      },
      {
        headers: [["Transfer-Encoding", "chunked"]],
        body: "zz\r\nabc\r\n0\r\n\r\n",
        wellFormed: false,
        reusable: false,
      },
      {
        headers: [["Transfer-Encoding", "gzip, chunked"]],
        body: "0\r\n\r\n",
        wellFormed: false,
        reusable: false,
      },
      {
        headers: [["Transfer-Encoding", "chunked, gzip"]],
        body: "",
        wellFormed: false,
        reusable: false,
      },
    ),
  },
);

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
    const wellFormed =
      methodOk &&
      t.wellFormed &&
      v.wellFormed &&
      host.wellFormed &&
      extras.every((e) => e.wellFormed) &&
      b.wellFormed &&
      !lf;
    const reusable =
      wellFormed && v.version === "HTTP/1.1" && extras.every((e) => e.reusable) && b.reusable;
    const isRoute = t.family === "route" && !t.target.startsWith("http:");
    const request = {
      method: m,
      target: t.target,
      version: v.version,
      headers,
      body: b.body,
      eol: lf ? "\n" : "\r\n",
      wellFormed,
      reusable,
      ...(isRoute && host.outcome !== undefined ? { outcome: host.outcome } : {}),
    };
    // fast-check prints a counterexample with this: the bytes, cut short.
    return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
  });

// --- the oracle --------------------------------------------------------------------------------

const CLIENT_ERROR_BODY =
  /^\{"error":"[A-Za-z ]+","message":"(Client Error|Exceeded maximum allowed HTTP header size)","statusCode":(400|431)\}$/;

/** Fastify's answer to a request Node's parser refused: two headers, a fixed JSON body. */
function isClientError(res: RawResponse, head: boolean): boolean {
  return (
    (res.status === 400 || res.status === 431) &&
    res.headers.map(([n]) => n).join() === "content-length,content-type" &&
    (head || CLIENT_ERROR_BODY.test(res.body.toString("latin1")))
  );
}
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
const JSON_ERRORS = new Set([
  "not-synced",
  "unknown-host",
  "bad-host",
  "unknown-app",
  "not-found",
  "bad-request",
]);

/** The path family the data listener routes this target to. */
export function familyOf(r: FuzzRequest): Family {
  const path = r.target.startsWith("http://") ? r.target.slice(r.target.indexOf("/", 7)) : r.target;
  if (/^\/v1\/route([/?#]|$)/.test(path)) return "route";
  if (!(r.method === "GET" || r.method === "HEAD")) return "other";
  if (/^\/v1\/(hosts\/|apps([/?#]|$)|snapshot([?#]|$))/.test(path)) return "api";
  return "other";
}

/** A short label of an answer, for the tally the test reports. */
export function answerLabel(e: Exchange): string {
  if (e.kind !== "answer") return e.kind;
  const reason = header(e.response, "x-mirror-reason");
  return reason === undefined ? String(e.response.status) : `${e.response.status} ${reason}`;
}

/** The whole answer, shortened, for failure messages. */
export function describeAnswer(e: Exchange): string {
  if (e.kind !== "answer")
    return `${e.kind} ${JSON.stringify(e.received.toString("latin1").slice(0, 200))}`;
  const { status, headers, body } = e.response;
  return JSON.stringify({
    status,
    headers,
    body: body.toString("latin1").slice(0, 200),
    closed: e.closed,
  });
}

/**
 * Why this answer is not allowed for this request, or null when it is. `apps` gives each App's
 * upstream as its header carries it.
 */
export function violation(
  r: FuzzRequest,
  e: Exchange,
  upstreams: ReadonlyMap<string, string | null>,
): string | null {
  if (e.kind === "timeout") return "no answer within the deadline";
  if (e.kind === "closed") {
    if (r.method === "CONNECT") return null;
    return `connection closed without an answer (received ${JSON.stringify(e.received.toString("latin1").slice(0, 200))})`;
  }
  const res = e.response;
  const text = res.body.toString("latin1");
  for (const f of FORBIDDEN) {
    if (text.includes(f) || res.headers.some(([, v]) => v.includes(f)))
      return "Secret bytes in the answer";
  }
  // Node joins repeated Expect lines with ", ".
  const expects = r.headers.filter(([n]) => n.toLowerCase() === "expect").map(([, v]) => v);
  const expect = expects.length === 0 ? undefined : expects.join(", ");
  if (
    res.interim.length > 0 &&
    !(res.interim.every((s) => s === 100) && expect !== undefined && CONTINUE.test(expect))
  )
    return `unexpected interim answers ${res.interim.join(",")}`;

  // Protocol level.
  if (isClientError(res, r.method === "HEAD")) {
    if (r.wellFormed) return `protocol-level ${res.status} for a well-formed request`;
    return null;
  }
  if (res.status === 417) {
    if (expect !== undefined && !CONTINUE.test(expect)) return null;
    return "417 without an Expect other than 100-continue";
  }
  if (r.reusable && e.closed) return "a well-formed keep-alive request's connection was closed";

  const family = familyOf(r);
  const reasons = headerCount(res, "x-mirror-reason");
  const reason = header(res, "x-mirror-reason");
  if (family === "route") {
    if (res.body.length !== 0) return "route answer with a body";
    if (reasons > 1) return "x-mirror-reason repeated";
    let got: Outcome;
    switch (res.status) {
      case 200: {
        const app = header(res, "x-mirror-app");
        if (reason !== undefined) return "200 with x-mirror-reason";
        if (app === undefined || !upstreams.has(app)) return `200 for unknown App ${app}`;
        if (!/^\d+$/.test(header(res, "x-mirror-revision") ?? ""))
          return "200 without x-mirror-revision";
        const upstream = upstreams.get(app) ?? undefined;
        if (header(res, "x-mirror-upstream") !== upstream)
          return `x-mirror-upstream ${header(res, "x-mirror-upstream")} is not ${upstream}`;
        got = { status: 200, app };
        break;
      }
      case 503: {
        if (!/^\d+$/.test(header(res, "retry-after") ?? "")) return "503 without retry-after";
        if (reason === "not-synced")
          return r.outcome === undefined ? null : "not-synced after sync";
        if (reason !== "secret-unavailable") return `503 with x-mirror-reason ${reason}`;
        const app = header(res, "x-mirror-app");
        if (app === undefined || !upstreams.has(app)) return `503 for unknown App ${app}`;
        got = { status: 503, reason, app };
        break;
      }
      case 404:
        if (reason !== "unknown-host") return `404 with x-mirror-reason ${reason}`;
        got = UNKNOWN;
        break;
      case 400:
        if (reason !== "bad-host") return `400 with x-mirror-reason ${reason}`;
        got = BAD;
        break;
      default:
        return `route answered ${res.status}`;
    }
    if (
      r.wellFormed &&
      r.outcome !== undefined &&
      JSON.stringify(got) !== JSON.stringify(r.outcome)
    )
      return `expected ${JSON.stringify(r.outcome)}, got ${JSON.stringify(got)}`;
    return null;
  }

  if (reasons > 0) return `x-mirror-reason on a ${family} answer`;
  const json = r.method === "HEAD" ? null : parseJson(text);
  if (r.method !== "HEAD" && json === undefined)
    return `${res.status} body is not JSON: ${text.slice(0, 100)}`;
  if (!/^application\/json/.test(header(res, "content-type") ?? ""))
    return `${res.status} is not JSON`;
  const error =
    json !== null && json !== undefined && typeof json === "object"
      ? (json as { error?: unknown }).error
      : undefined;
  if (family === "api") {
    if (![200, 400, 404, 503].includes(res.status)) return `API answered ${res.status}`;
    if (res.status !== 200 && r.method !== "HEAD" && !JSON_ERRORS.has(String(error)))
      return `API error code ${String(error)}`;
    return null;
  }
  if (res.status === 404 && (r.method === "HEAD" || error === "not-found")) return null;
  if (res.status === 400 && (r.method === "HEAD" || error === "bad-request")) return null;
  return `${r.method} ${r.target.slice(0, 40)} answered ${res.status} ${text.slice(0, 80)}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The x-mirror-upstream each App's routed answer carries. */
export function upstreamHeaders(apps: readonly WorldApp[]): Map<string, string | null> {
  return new Map(
    apps.map((a) => [
      a.name,
      a.upstream === undefined
        ? null
        : a.upstream.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c)),
    ]),
  );
}

export type { RawResponse };
