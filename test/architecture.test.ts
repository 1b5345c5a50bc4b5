import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DIAGRAM_SOURCE, DIAGRAM_SVG, diagramStamp } from "../scripts/diagram-stamp.ts";

// The newcomer's map (docs/architecture.md) is drawn from a text source; these hold the drawing to
// that source and the source to src/, without Graphviz installed.
const source = readFileSync(DIAGRAM_SOURCE, "utf8");
const folders = readdirSync("src", { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe("docs/architecture.md", () => {
  it("shows the SVG rendered from the current source (npm run docs:diagram)", () => {
    expect(readFileSync(DIAGRAM_SVG, "utf8")).toContain(diagramStamp(source));
  });

  it.each(folders)("draws src/%s/ as a box", (folder) => {
    expect(source).toMatch(new RegExp(`\\[label="${folder}/\\\\n`));
  });

  it("stays a page: at most 150 lines, the drawing in it", () => {
    const page = readFileSync("docs/architecture.md", "utf8");
    expect(page.split("\n").length).toBeLessThanOrEqual(150);
    expect(page).toContain("](architecture.svg)");
  });
});
