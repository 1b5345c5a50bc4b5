// The zero-hop table as the bodies nginx's push endpoint reads
// (manifests/data-planes/nginx/zero-hop/replica-mirror.lua): the revision line first, then one
// entry a line, `=` for an exact hostname and `*` for a wildcard suffix, then `c <app> <value>`
// for each App with a credential (credential-lines.ts), the value raw to the end of the line (a
// credential holds no line break; spaces, tabs and `|` stay), then the certificates' `n` and `k`
// lines (nginx-certificates.ts). No entry carries the revision
// (nginx reads it with the table's generation), so an App's line is rendered once (table-lines.ts)
// and a push only joins them.

import { cachedPer } from "../cached-per.ts";
import type { PushView, RouteView } from "../snapshot/types.ts";
import { type CertificateEntry, certificateEntryLists } from "./certificates.ts";
import {
  type CredentialFormat,
  type CredentialLine,
  type CredentialLines,
  credentialLines,
} from "./credential-lines.ts";
import { flatLine } from "./flat-line.ts";
import { nginxCertificateLines } from "./nginx-certificates.ts";
import type { TableEntry } from "./table.ts";
import { entryFields, type LineFormat, tableLines } from "./table-lines.ts";

/**
 * The whole table's body, for a PUT: the entries, then the credentials in App name order, then
 * the certificates' names in name order and certificates in App order. Holds Secret bytes.
 */
export function nginxTableBody(view: PushView): string {
  const credentials = nginxCredentials(view).map(credentialText);
  const certificates = nginxCertificateLines(view);
  return body(`revision ${view.revision}\n`, [...nginxLines(view), ...credentials, certificates]);
}

/**
 * A table nginx holds whole: its hostname index, its lines and credentials (per App chunk, as
 * `nginxLines` and `nginxCredentials` give them: no App kept alive, but every credential, as the
 * table itself), its certificates (`certificateEntryLists`) and the generation nginx gave it.
 */
export interface NginxBase {
  readonly routes: RouteView["routes"];
  readonly lines: readonly (readonly string[])[];
  readonly credentials: CredentialLines;
  /** Per App chunk, as `certificateEntryLists` gives them. */
  readonly certificates: readonly (readonly CertificateEntry[])[];
  readonly generation: string;
}

/** The base a PUT of `view` leaves in nginx, under the generation nginx answered. */
export const nginxBase = (view: PushView, generation: string): NginxBase => ({
  routes: view.routes,
  lines: nginxLines(view),
  credentials: nginxCredentials(view),
  certificates: certificateEntryLists(view),
  generation,
});

/** `view`'s lines per App chunk; the same list for a chunk that Snapshots share. */
export const nginxLines = (view: RouteView) => tableLines(view, nginxLine);

/** nginx holds a credential as it is: its dict values and lines keep every byte a value may hold. */
const raw: CredentialFormat = (credential) => credential;

/** `view`'s credentials per App chunk; the same list for a chunk that Snapshots share. */
export const nginxCredentials = (view: RouteView) => credentialLines(view, raw);

/** A body: `head`, then each chunk's lines, each line ended by a line break. */
export function body(head: string, chunks: readonly (readonly string[])[]): string {
  const parts = [head];
  for (const lines of chunks) {
    if (lines.length > 0) parts.push(`${lines.join("\n")}\n`);
  }
  return parts.join("");
}

export const credentialLine = (line: CredentialLine) => flatLine(`c ${line.app} ${line.value}`);

/** A chunk's credential lines as text, once per list. */
export const credentialText = cachedPer((lines: readonly CredentialLine[]) =>
  lines.map(credentialLine),
);

const nginxLine: LineFormat = (kind, name, entry) =>
  `${kind === "exact" ? "=" : "*"} ${name} ${entryValue(entry)}`;

/**
 * The fields of replica-mirror.lua's `fields`: `entryFields`, and the upstream when routed to a
 * host (last: an upstream may hold `|`).
 */
function entryValue(entry: TableEntry): string {
  const fields = entryFields(entry);
  return entry.kind === "routed" && entry.target !== null ? `${fields}|${entry.upstream}` : fields;
}
