// The PATCH bodies nginx's push endpoint reads after a whole table (replica-mirror.lua): every
// line of the view that is not the base's, since the base and not since the last PATCH (nginx
// replaces its overlay whole), then `c <app> ` (an empty value) for each credential the base has
// and the view has not, then the certificates' changes. The lines that differ from the base are
// kept per App chunk, and each view is compared with the one before it: a push costs the chunks
// changed since the last push and the join of the overlay, where comparing every chunk changed
// since the base cost a chunk more each rotation (0.5 ms for the first, 2.5 ms after 200 at 10k
// Apps, 12-07).

import type { PushView } from "../snapshot/types.ts";
import { certificateEntries } from "./certificates.ts";
import { type CredentialLine, credentialChanges } from "./credential-lines.ts";
import { certificateChanges } from "./nginx-certificates.ts";
import {
  body,
  credentialLine,
  type NginxBase,
  nginxCredentials,
  nginxLines,
} from "./nginx-table.ts";

/**
 * The body of a PATCH from the base to `view`; null when `view` has another hostname index, whose
 * keys may differ, or when more than `maxLines` lines, or more than `maxCertificateLines`
 * certificate lines, changed: then the whole table goes. Holds Secret bytes.
 */
export type NginxChanges = (view: PushView) => string | null;

/** The chunk's lines that differ from the base's, by kind. */
interface ChunkChanges {
  readonly entries: readonly string[];
  readonly written: readonly string[];
  readonly dropped: readonly string[];
}

const NONE: ChunkChanges = { entries: [], written: [], dropped: [] };

/** The PATCH bodies from `base`, for views of its hostname index pushed one after another. */
export function nginxChanges(
  base: NginxBase,
  maxLines: number,
  maxCertificateLines: number = maxLines,
): NginxChanges {
  let lastLines = base.lines;
  let lastCredentials = base.credentials;
  const changed = new Map<number, ChunkChanges>();
  let lineCount = 0;
  const update = (c: number, next: ChunkChanges) => {
    const before = changed.get(c) ?? NONE;
    lineCount -= before.entries.length + before.written.length + before.dropped.length;
    lineCount += next.entries.length + next.written.length + next.dropped.length;
    if (next === NONE) changed.delete(c);
    else changed.set(c, next);
  };
  return (view) => {
    if (view.routes !== base.routes) return null;
    const lines = nginxLines(view);
    const credentials = nginxCredentials(view);
    const chunks = Math.max(lines.length, credentials.length, lastCredentials.length);
    for (let c = 0; c < chunks; c++) {
      if (lines[c] === lastLines[c] && credentials[c] === lastCredentials[c]) continue;
      update(c, chunkChanges(lines[c] ?? [], base.lines[c] ?? [], credentials, base, c));
    }
    lastLines = lines;
    lastCredentials = credentials;
    if (lineCount > maxLines) return null;
    const certificates = certificateChanges(certificateEntries(view), base.certificates);
    if (certificates.length > maxCertificateLines || lineCount + certificates.length > maxLines)
      return null;
    const order = [...changed.keys()].sort((a, b) => a - b);
    const parts = (kind: keyof ChunkChanges) => order.map((c) => changed.get(c)![kind]);
    return body(`revision ${view.revision}\nbase ${base.generation}\n`, [
      ...parts("entries"),
      ...parts("written"),
      ...parts("dropped"),
      certificates,
    ]);
  };
}

/** A one-off PATCH body from `base` to `view` (`nginxChanges`). */
export const nginxChangesBody = (
  view: PushView,
  base: NginxBase,
  maxLines: number,
  maxCertificateLines: number = maxLines,
): string | null => nginxChanges(base, maxLines, maxCertificateLines)(view);

/** Chunk `c`'s lines that are not the base's; NONE when it holds the base's. */
function chunkChanges(
  now: readonly string[],
  then: readonly string[],
  credentials: readonly (readonly CredentialLine[])[],
  base: NginxBase,
  c: number,
): ChunkChanges {
  const entries: string[] = [];
  if (now !== then) {
    for (let i = 0; i < now.length; i++) if (now[i] !== then[i]) entries.push(now[i]!);
  }
  const credentialsNow = credentials[c] ?? [];
  const credentialsThen = base.credentials[c] ?? [];
  const { written, dropped } =
    credentialsNow === credentialsThen
      ? { written: [], dropped: [] }
      : credentialChanges([credentialsNow], [credentialsThen]);
  if (entries.length === 0 && written.length === 0 && dropped.length === 0) return NONE;
  return {
    entries,
    written: written.map(credentialLine),
    dropped: dropped.map((app) => `c ${app} `),
  };
}
