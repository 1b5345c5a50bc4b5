// The zero-hop table as the body nginx's push endpoint reads
// (manifests/data-planes/nginx/zero-hop/replica-mirror.lua): the revision line first, then one
// entry a line, `=` for an exact hostname and `*` for a wildcard suffix.

import type { RoutingTable, TableEntry } from "./table.ts";

/** The table's body; its entries' values are the HAProxy map's (see replica-mirror.lua). */
export function nginxTableBody(table: RoutingTable): string {
  const revision = String(table.revision);
  const lines = [`revision ${revision}`];
  for (const [host, entry] of table.exact) lines.push(`= ${host} ${entryValue(entry, revision)}`);
  for (const [suffix, entry] of table.wildcard) {
    lines.push(`* ${suffix} ${entryValue(entry, revision)}`);
  }
  return `${lines.join("\n")}\n`;
}

function entryValue(entry: TableEntry, revision: string): string {
  if (entry.kind === "secret-unavailable") return `S|${entry.app}`;
  const { target } = entry;
  if (target === null) return `N|${entry.app}|${revision}`;
  const kind = target.literal ? "I" : "D";
  return `${kind}|${entry.app}|${revision}|${target.host}|${target.port}|${entry.upstream}`;
}
