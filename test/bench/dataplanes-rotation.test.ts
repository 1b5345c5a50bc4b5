import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  describeAnswer,
  type Observed,
  rotationOutcome,
} from "../../bench/dataplanes/rotation-observer.ts";
import { authorizationDigest } from "../../bench/dataplanes/seen-upstream.ts";

describe("a rotation as clients see it", () => {
  const at = (sentAt: number, receivedAt: number, seen: Observed["seen"]): Observed => ({
    sentAt,
    receivedAt,
    seen,
  });

  it("times the first new answer on any connection and counts what was sent after it", () => {
    const observed = [
      at(100, 101, "old"),
      at(101, 103, "old"),
      // In flight when the first new answer came: decided before the switch, not counted.
      at(102, 106, "old"),
      at(102, 104, "new"),
      at(104.5, 105, "new"),
      at(105, 107, "failed"),
      at(106, 107, "other"),
      at(107, 108, "old"),
    ];
    expect(rotationOutcome(observed, 100)).toEqual({
      ms: 4,
      after: { checked: 4, old: 1, other: 1, failed: 1 },
    });
  });

  it("has no time when the new value never came", () => {
    expect(rotationOutcome([at(1, 2, "old"), at(2, 3, "failed")], 0)).toEqual({
      ms: null,
      after: { checked: 0, old: 0, other: 0, failed: 0 },
    });
  });

  it("digests each Authorization the upstream got, and names them without their values", () => {
    const sha = (v: string) => createHash("sha256").update(v).digest("hex").slice(0, 16);
    expect(authorizationDigest([])).toBe("none");
    expect(authorizationDigest(["Bearer a"])).toBe(sha("Bearer a"));
    expect(authorizationDigest(["Bearer a", "Basic b"])).toBe(
      `${sha("Bearer a")},${sha("Basic b")}`,
    );
    const known = { [sha("Bearer a")]: "the App's value" };
    const answer = (seen: string | null, status = 200, reason: string | null = null) =>
      describeAnswer({ status, reason, seen }, known);
    expect(answer(sha("Bearer a"))).toBe("200, the upstream got Authorization: the App's value");
    expect(answer(`${sha("Bearer a")},${sha("x")}`)).toBe(
      "200, the upstream got Authorization: the App's value and another value",
    );
    expect(answer("none")).toBe("200, the upstream got no Authorization");
    expect(answer(null, 503, "secret-unavailable")).toBe(
      "503 secret-unavailable, not from the upstream",
    );
    expect(describeAnswer(new Error("socket hang up"), known)).toBe(
      "the connection failed (socket hang up)",
    );
  });
});
