import { describe, expect, it } from "vitest";
import {
  caddyLiteral,
  NO_CREDENTIAL,
  proxyTo,
  setAuthorization,
} from "../../src/push/caddy-answers.ts";
import { keyRoutes } from "../../src/push/caddy-key-routes.ts";
import type { TableEntry } from "../../src/push/table.ts";

describe("the key routes of Apps with credentials", () => {
  const keyed = (app: string, credential: string | null): TableEntry => ({
    kind: "routed",
    app,
    upstream: "http://k.svc:80",
    target: { host: "k.svc", port: 80, literal: false },
    credential,
  });
  const proxy = (app: string) =>
    proxyTo({ app, dial: "k.svc:80", upstream: "http://k.svc:80", revision: "3" });

  it("sets each App's credential as Authorization, and in a group that mixes, the others' a header the strip drops", () => {
    const entries: [string, TableEntry][] = [
      ["a.com", keyed("a", "Bearer a|1 \t")],
      ["b.com", keyed("b", null)],
      ["c.com", keyed("c", "{http.request.uri}\\}")],
      ["d.com", keyed("d", "same")],
      ["e.com", keyed("e", "same")],
    ];
    const mixed = {
      handler: "map",
      source: "{http.request.hostport}",
      destinations: ["{mirror_app}", "{mirror_authorization}", "{mirror_credential}"],
      mappings: [
        { input: "a.com", outputs: ["a", "Authorization", "Bearer a|1 \t"] },
        { input: "b.com", outputs: ["b", NO_CREDENTIAL, ""] },
        { input: "c.com", outputs: ["c", "Authorization", "\\{http.request.uri\\}\\\\}"] },
      ],
    };
    const shared = {
      handler: "map",
      source: "{http.request.hostport}",
      destinations: ["{mirror_app}"],
      mappings: [
        { input: "d.com", outputs: ["d"] },
        { input: "e.com", outputs: ["e"] },
      ],
    };
    expect(keyRoutes(entries, "3", { groupSize: 3 })).toEqual([
      {
        match: [{ header: { Host: ["a.com", "b.com", "c.com"] } }],
        handle: [
          mixed,
          setAuthorization("{mirror_authorization}", "{mirror_credential}"),
          proxy("{mirror_app}"),
        ],
        terminal: true,
      },
      {
        match: [{ header: { Host: ["d.com", "e.com"] } }],
        handle: [shared, setAuthorization("Authorization", "same"), proxy("{mirror_app}")],
        terminal: true,
      },
    ]);
    expect(setAuthorization("Authorization", "v")).toEqual({
      handler: "headers",
      request: { set: { Authorization: ["v"] }, delete: ["X-Mirror-*"] },
    });
  });

  it("answers each reason an App is not routed with its own 503 and the App's name", () => {
    const entries: [string, TableEntry][] = [
      ["a.com", { kind: "not-routed", app: "a", reason: "credentials-off" }],
      ["b.com", { kind: "not-routed", app: "b", reason: "secret-unusable" }],
      ["c.com", { kind: "not-routed", app: "c", reason: "secret-unavailable" }],
      ["d.com", { kind: "not-routed", app: "d", reason: "credentials-off" }],
    ];
    const answer = (reason: string, app: string, retryAfter: boolean) => ({
      handler: "static_response",
      status_code: 503,
      headers: {
        "X-Mirror-Reason": [reason],
        ...(retryAfter ? { "Retry-After": ["5"] } : {}),
        "X-Mirror-App": [app],
      },
    });
    expect(keyRoutes(entries, "3")).toEqual([
      {
        match: [{ host: ["c.com"] }],
        handle: [answer("secret-unavailable", "c", true)],
        terminal: true,
      },
      {
        match: [{ host: ["b.com"] }],
        handle: [answer("secret-unusable", "b", true)],
        terminal: true,
      },
      {
        match: [{ host: ["a.com", "d.com"] }],
        handle: [
          {
            handler: "map",
            source: "{http.request.hostport}",
            destinations: ["{mirror_app}"],
            mappings: [
              { input: "a.com", outputs: ["a"] },
              { input: "d.com", outputs: ["d"] },
            ],
          },
          answer("credentials-off", "{mirror_app}", false),
        ],
        terminal: true,
      },
    ]);
  });

  it("escapes the braces of a text that holds a '{', and leaves any other as it is", () => {
    expect(["plain}\\}", "{a}", "\\{b\\}", ""].map(caddyLiteral)).toEqual([
      "plain}\\}",
      "\\{a\\}",
      "\\\\{b\\\\}",
      "",
    ]);
  });
});
