// Generated request lines: methods (Node's, lower-case and invented ones), targets in the route,
// lookup and other path families (with queries, fragments and bad escapes) and HTTP versions.

import http from "node:http";
import fc from "fast-check";
import { anyChar, latin1 } from "./http-chars.ts";
import { BAD, label, type Outcome, routed, UNAVAILABLE, UNKNOWN } from "./http-hosts.ts";

/** The methods Node parses, but CONNECT (which gets no answer). */
export const NODE_METHODS = http.METHODS.filter((m) => m !== "CONNECT");
export const method = fc.oneof(
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

/** Which part of the data listener a target reaches. */
export type Family = "route" | "api" | "other";
interface Target {
  readonly target: string;
  readonly family: Family;
  readonly wellFormed: boolean;
  /** An absolute-form route target: the answer its authority asks for, when no header wins. */
  readonly authority?: Outcome;
}

export const target: fc.Arbitrary<Target> = fc.oneof(
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
      // Absolute form: the authority stands for Host (RFC 9112 §3.2.2); Fastify routes on its path.
      {
        target: "http://shop.example.com/v1/route",
        family: "route",
        wellFormed: true,
        authority: routed("shop"),
      },
      {
        target: "http://BLOG.example.com:8000/v1/route/x?y",
        family: "route",
        wellFormed: true,
        authority: UNAVAILABLE("blog"),
      },
      {
        target: "http://nope.example.org/v1/route",
        family: "route",
        wellFormed: true,
        authority: UNKNOWN,
      },
      { target: "http://10.0.0.12/v1/route", family: "route", wellFormed: true, authority: BAD },
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

export const version = fc.oneof(
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
