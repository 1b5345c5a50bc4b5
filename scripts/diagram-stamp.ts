// The mark that ties docs/architecture.svg to the docs/architecture.dot it was rendered from, so
// that a test can tell a stale drawing without Graphviz installed.

import { createHash } from "node:crypto";

export const DIAGRAM_SOURCE = "docs/architecture.dot";
export const DIAGRAM_SVG = "docs/architecture.svg";

/** The XML comment the render writes into the SVG: the source's sha256. */
export function diagramStamp(source: string): string {
  return `<!-- rendered from ${DIAGRAM_SOURCE}, sha256 ${createHash("sha256").update(source).digest("hex")} -->`;
}
