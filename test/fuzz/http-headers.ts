// Generated headers besides the host (encodings, connection handling, Expect, many or oversized
// headers, malformed names and values) and bodies (sized, chunked, announced only, contradictory).

import fc from "fast-check";
import { latin1, valueChar } from "./http-chars.ts";

interface Extra {
  readonly headers: readonly (readonly [string, string])[];
  readonly wellFormed: boolean;
  readonly reusable: boolean;
}

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,24}$/);
/** One header (or a few that belong together) a request may carry besides the host. */
export const extraHeader: fc.Arbitrary<Extra> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(token, latin1(valueChar, 60))
      .map(([n, v]): Extra => ({ headers: [[`X-${n}`, v]], wellFormed: true, reusable: true })),
  },
  {
    // A request a data plane routed carries it: answered 403 routed-request, whatever its host.
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("X-Mirror-App", "x-mirror-app", "X-MIRROR-APP"), latin1(valueChar, 12))
      .map(([n, v]): Extra => ({ headers: [[n, v]], wellFormed: true, reusable: true })),
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
/** A body with the headers that frame it. */
export const body: fc.Arbitrary<Body> = fc.oneof(
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
