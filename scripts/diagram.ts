// `npm run docs:diagram`: renders the newcomer's map (docs/architecture.md) from its text source
// with Graphviz's `dot` (Debian's `graphviz`), stamped with the source's hash.

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { DIAGRAM_SOURCE, DIAGRAM_SVG, diagramStamp } from "./diagram-stamp.ts";

const source = readFileSync(DIAGRAM_SOURCE, "utf8");
const svg = execFileSync("dot", ["-Tsvg", DIAGRAM_SOURCE], { encoding: "utf8" });
const declaration = /^<\?xml[^>]*\?>\n/.exec(svg)?.[0] ?? "";
writeFileSync(
  DIAGRAM_SVG,
  `${declaration}${diagramStamp(source)}\n${svg.slice(declaration.length)}`,
);
process.stderr.write(`wrote ${DIAGRAM_SVG}\n`);
