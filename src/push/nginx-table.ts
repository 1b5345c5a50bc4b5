// The zero-hop table as the body nginx's push endpoint reads
// (manifests/data-planes/nginx/zero-hop/replica-mirror.lua): the revision line first, then one
// entry a line, `=` for an exact hostname and `*` for a wildcard suffix. No entry carries the
// revision (nginx reads it with the table's generation), so an App's line is rendered once
// (table-lines.ts) and a push only joins them.

import type { RouteView } from "../snapshot/types.ts";
import type { TableEntry } from "./table.ts";
import { type LineFormat, tableLines } from "./table-lines.ts";

/** The table's body. */
export function nginxTableBody(view: RouteView): string {
  const parts = [`revision ${view.revision}\n`];
  for (const lines of tableLines(view, nginxLine)) {
    if (lines.length > 0) parts.push(`${lines.join("\n")}\n`);
  }
  return parts.join("");
}

const nginxLine: LineFormat = (kind, name, entry) =>
  `${kind === "exact" ? "=" : "*"} ${name} ${entryValue(entry)}`;

/** The fields of replica-mirror.lua's `fields`: kind, App, then host, port and upstream. */
function entryValue(entry: TableEntry): string {
  if (entry.kind === "secret-unavailable") return `S|${entry.app}`;
  const { target } = entry;
  if (target === null) return `N|${entry.app}`;
  const kind = target.literal ? "I" : "D";
  return `${kind}|${entry.app}|${target.host}|${target.port}|${entry.upstream}`;
}
