import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../adr/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".md"));
const numberOf = (file: string): number => Number(file.slice(0, 4));
const textOf = (file: string): string => readFileSync(new URL(file, dir), "utf8");
const fileOf = new Map(files.map((f) => [numberOf(f), f]));

// A record a newcomer reads in minutes: a title, its status, then three sections, all in 2 KB.
const MAX_BYTES = 2048;
const shape =
  /^# (\d+)\. \S[^\n]*\n\nStatus: (accepted|withdrawn|superseded by (\d+))\n\n## Context\n/;

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
      expect(headings[0]).toMatch(new RegExp(`^# ${numberOf(file)}\\. \\S`));
      expect(headings.slice(1)).toEqual(["## Context", "## Decision", "## Consequences"]);
    },
  );

  it.each(files)(
    "%s has a status under its title: accepted, withdrawn, or superseded by another ADR",
    (file) => {
      const text = readFileSync(new URL(file, dir), "utf8");
      const match = shape.exec(text);
      expect(match?.[1]).toBe(String(numberOf(file)));
      const successor = match?.[3];
      if (successor !== undefined) {
        expect(Number(successor)).not.toBe(numberOf(file));
        expect(files.map(numberOf)).toContain(Number(successor));
      }
    },
  );

  const superseded = files.filter((f) => shape.exec(textOf(f))?.[3] !== undefined);

  it.each(superseded)(
    "%s names a later successor that stands, and the successor names it back",
    (file) => {
      const number = numberOf(file);
      const successor = Number(shape.exec(textOf(file))?.[3]);
      const successorFile = fileOf.get(successor);
      expect(successor).toBeGreaterThan(number);
      expect(successorFile).toBeDefined();
      const successorText = textOf(successorFile ?? "");
      expect(shape.exec(successorText)?.[2]).not.toBe("withdrawn");
      expect(citedBy(successorText)).toContain(number);
    },
  );

  it.each(files)("%s is under 2 KB", (file) => {
    expect(readFileSync(new URL(file, dir)).byteLength).toBeLessThan(MAX_BYTES);
  });
});

/** The ADR numbers a text cites: "ADR 7", "ADRs 22 and 28", "ADRs 14, 19 and 21", "supersedes 26". */
function citedBy(text: string): number[] {
  const lists = text.matchAll(/\b(?:ADRs?|[Ss]upersedes)\s+(\d+(?:(?:,\s*|,?\s+and\s+)\d+)*)/g);
  return [...lists].flatMap((m) => (m[1] ?? "").split(/\D+/).map(Number));
}
