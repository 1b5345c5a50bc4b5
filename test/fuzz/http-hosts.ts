// Generated Host and X-Forwarded-Host headers, each with the answer `/v1/route` must give when
// the host's fate in the fuzz world (test/support/world-apps.ts) is known.

import fc from "fast-check";
import { anyChar, isWellFormedValue, latin1, valueChar, w } from "./http-chars.ts";

/** What `/v1/route` must answer for a host whose fate is known. */
export type Outcome =
  | { readonly status: 200; readonly app: string }
  | { readonly status: 503; readonly reason: "secret-unavailable"; readonly app: string }
  | { readonly status: 404; readonly reason: "unknown-host" }
  | { readonly status: 400; readonly reason: "bad-host" }
  | { readonly status: 403; readonly reason: "routed-request" };

/** The outcomes a known host may have. */
export const routed = (app: string): Outcome => ({ status: 200, app });
export const UNKNOWN: Outcome = { status: 404, reason: "unknown-host" };
export const BAD: Outcome = { status: 400, reason: "bad-host" };
/** Whatever the host: the request carries `x-mirror-app`, as one a data plane routed does. */
export const ROUTED_REQUEST: Outcome = { status: 403, reason: "routed-request" };
export const UNAVAILABLE = (app: string): Outcome => ({
  status: 503,
  reason: "secret-unavailable",
  app,
});

interface HostValue {
  readonly value: string;
  readonly outcome?: Outcome;
  readonly wellFormed: boolean;
}

/** One DNS label. */
export const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
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
      // A name whose last label is a number is an IPv4 address to a URL parser: refused.
      { value: "1.2.3.4", outcome: BAD, wellFormed: true },
      { value: "10.0.0.12:8000", outcome: BAD, wellFormed: true },
      { value: "127.1", outcome: BAD, wellFormed: true },
      { value: "shop.example.0x7f", outcome: BAD, wellFormed: true },
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
  /**
   * Whether an absolute-form target's authority decides the answer in place of these headers:
   * no X-Forwarded-Host, and not two Host lines (RFC 9112 §3.2.2).
   */
  readonly authorityWins: boolean;
}

const hostName = fc.constantFrom("Host", "host", "HOST", "hOsT");
const xfhName = fc.constantFrom("X-Forwarded-Host", "x-forwarded-host");

/** The host headers of a request: one Host, an X-Forwarded-Host, lists, repeats or none. */
export const hostHeaders: fc.Arbitrary<HostHeaders> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(hostName, hostValue).map(
      ([n, h]): HostHeaders => ({
        headers: [[n, h.value]],
        outcome: h.outcome,
        wellFormed: h.wellFormed,
        authorityWins: true,
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
        authorityWins: false,
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
        authorityWins: false,
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
        authorityWins: false,
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
        authorityWins: false,
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
        authorityWins: false,
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant<HostHeaders>({
      headers: [],
      outcome: BAD,
      wellFormed: true,
      authorityWins: true,
    }),
  },
);
