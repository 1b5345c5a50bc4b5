// The zero-hop table as the bodies nginx's push endpoint reads
// (manifests/data-planes/nginx/zero-hop/replica-mirror.lua): the revision line first, then one
// entry a line, `=` for an exact hostname and `*` for a wildcard suffix. No entry carries the
// revision (nginx reads it with the table's generation), so an App's line is rendered once
// (table-lines.ts) and a push only joins them.

import type { RouteView } from "../snapshot/types.ts";
import type { TableEntry } from "./table.ts";
import { type LineFormat, tableLines } from "./table-lines.ts";

/** The whole table's body, for a PUT. */
export function nginxTableBody(view: RouteView): string {
  return body(`revision ${view.revision}\n`, tableLines(view, nginxLine));
}

/** A table nginx holds whole: the view it was pushed from and the generation nginx gave it. */
export interface NginxBase {
  readonly routes: RouteView["routes"];
  readonly chunks: RouteView["apps"]["chunks"];
  readonly generation: string;
}

/**
 * The body of a PATCH from `base` to `view`: every line of `view` that is not `base`'s (all since
 * the base, not since the last PATCH: nginx replaces the overlay whole). Null when `view` has
 * another hostname index, whose keys may differ, or when more than `maxLines` lines changed: then
 * the whole table goes.
 */
export function nginxChangesBody(
  view: RouteView,
  base: NginxBase,
  maxLines: number,
): string | null {
  if (view.routes !== base.routes) return null;
  const { chunks } = view.apps;
  const lines = tableLines(view, nginxLine);
  // The base's lines are still kept (table-lines.ts): `base` holds its chunks.
  const before = tableLines({ revision: 0, routes: base.routes, apps: base }, nginxLine);
  const changed: string[] = [];
  for (let c = 0; c < chunks.length; c++) {
    if (chunks[c] === base.chunks[c]) continue;
    const [now, then] = [lines[c]!, before[c]!];
    for (let i = 0; i < now.length; i++) {
      if (now[i] === then[i]) continue;
      if (changed.length === maxLines) return null;
      changed.push(now[i]!);
    }
  }
  return body(`revision ${view.revision}\nbase ${base.generation}\n`, [changed]);
}

function body(head: string, chunks: readonly (readonly string[])[]): string {
  const parts = [head];
  for (const lines of chunks) {
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
