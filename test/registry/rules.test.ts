// A saved check of a Registry value is adopted only under the REGISTRY_RULES that made it (ADR 77):
// a change to the rules that leaves the number alone would let a warm start serve what this
// build refuses. So any change to src/registry/ renews this fingerprint, by hand, with a look at
// whether the number must rise too.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";

const DIR = join(import.meta.dirname, "../../src/registry");

/** The sha256 of every source of src/registry/ but rules.ts, by name: 16 hex digits. */
function fingerprint(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(DIR)
    .filter((f) => f !== "rules.ts")
    .sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(DIR, file)))
      .update("\0");
  return hash.digest("hex").slice(0, 16);
}

describe("REGISTRY_RULES", () => {
  it("is renewed with the sources of the Registry's rules", () => {
    expect(
      { rules: REGISTRY_RULES, sources: fingerprint() },
      "src/registry/ changed: if some value could now parse to another Registry or other refusals, raise REGISTRY_RULES (src/registry/rules.ts); either way, put the new fingerprint here",
    ).toEqual({ rules: 1, sources: "656f73196c0146da" });
  });
});
