import { describe, expect, it } from "vitest";
import { ERRORS, ROUTE_OUTCOMES } from "../../src/answers/reasons.ts";

describe("the error catalogue", () => {
  it("documents every route reason with the status the route answers", () => {
    const statuses = Object.fromEntries(
      ROUTE_OUTCOMES.filter((o) => o !== "routed").map((o) => [
        o,
        ERRORS[o as keyof typeof ERRORS].status,
      ]),
    );
    expect(statuses).toEqual({
      "secret-unavailable": 503,
      "not-synced": 503,
      "unknown-host": 404,
      "bad-host": 400,
      "secret-unusable": 503,
      "credentials-off": 503,
      "routed-request": 403,
    });
  });

  it("gives every code a message", () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(entry.message.length, code).toBeGreaterThan(10);
    }
  });
});
