import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../adr/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".md"));

describe("decision records", () => {
  it("are numbered uniquely, from 1 without gaps", () => {
    const numbers = files.map((f) => Number(/^(\d{4})-[a-z0-9-]+\.md$/.exec(f)?.[1]));
    expect(numbers.every(Number.isInteger)).toBe(true);
    expect([...numbers].sort((a, b) => a - b)).toEqual(
      Array.from({ length: files.length }, (_, i) => i + 1),
    );
  });

  it.each(files)(
    "%s has a title matching its number, then Context, Decision and Consequences",
    (file) => {
      const text = readFileSync(new URL(file, dir), "utf8");
      const headings = [...text.matchAll(/^(#{1,2}) (.+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(headings[0]).toMatch(new RegExp(`^# ${Number(file.slice(0, 4))}\\. \\S`));
      expect(headings.slice(1)).toEqual(["## Context", "## Decision", "## Consequences"]);
    },
  );
});
