// The PATCH bodies nginx's push endpoint reads after a whole table (replica-mirror.lua): every
// line of the view that is not the base's, since the base and not since the last PATCH (nginx
// replaces its overlay whole), then `c <app> ` (an empty value) for each credential the base has
// and the view has not, then the certificates' changes. The lines that differ from the base are
// kept per App chunk, and each view is compared with the one before it (`forChangedChunks`): a
// push costs the chunks changed since the last push and the join of the overlay, where comparing
// every chunk changed since the base cost a chunk more each rotation (0.7 ms for the first, 2.4
// ms after 400 at 10k Apps, smoke-nginx-changes.ts, 12-07).

import { forChangedChunks } from "../snapshot/chunk-changes.ts";
import type { PushView } from "../snapshot/types.ts";
import { type CertificateEntry, certificateEntryLists } from "./certificates.ts";
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

/** A chunk's lines that differ from the base's, by kind. */
interface ChunkChanges {
  readonly entries: readonly string[];
  readonly written: readonly string[];
  readonly dropped: readonly string[];
  readonly certificates: readonly string[];
}

const NONE: ChunkChanges = { entries: [], written: [], dropped: [], certificates: [] };

/** The current lists of a view, per App chunk. */
interface ViewLists {
  readonly lines: readonly (readonly string[])[];
  readonly credentials: readonly (readonly CredentialLine[])[];
  readonly certificates: readonly (readonly CertificateEntry[])[];
}

/**
 * The PATCH bodies from `base`, for views of its hostname index pushed one after another. The
 * first compares every chunk with the base's (the base keeps no App alive); each next one only the
 * chunks its view replaced since the one before.
 */
export function nginxChanges(
  base: NginxBase,
  maxLines: number,
  maxCertificateLines: number = maxLines,
): NginxChanges {
  let lastChunks: PushView["apps"]["chunks"] | null = null;
  const changed = new Map<number, ChunkChanges>();
  let lineCount = 0;
  let certificateCount = 0;
  const update = (c: number, next: ChunkChanges) => {
    const before = changed.get(c) ?? NONE;
    lineCount += lines(next) - lines(before);
    certificateCount += next.certificates.length - before.certificates.length;
    if (next === NONE) changed.delete(c);
    else changed.set(c, next);
  };
  return (view) => {
    if (view.routes !== base.routes) return null;
    const now: ViewLists = {
      lines: nginxLines(view),
      credentials: nginxCredentials(view),
      certificates: certificateEntryLists(view),
    };
    const visit = (c: number) => update(c, chunkChanges(now, base, c));
    if (lastChunks === null) {
      for (let c = 0; c < now.lines.length; c++) visit(c);
    } else {
      forChangedChunks(lastChunks, view.apps.chunks, visit);
    }
    lastChunks = view.apps.chunks;
    if (lineCount + certificateCount > maxLines || certificateCount > maxCertificateLines)
      return null;
    const order = [...changed.keys()].sort((a, b) => a - b);
    const parts = (kind: keyof ChunkChanges) => order.map((c) => changed.get(c)![kind]);
    return body(`revision ${view.revision}\nbase ${base.generation}\n`, [
      ...parts("entries"),
      ...parts("written"),
      ...parts("dropped"),
      ...parts("certificates"),
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

const lines = (changes: ChunkChanges) =>
  changes.entries.length + changes.written.length + changes.dropped.length;

/** Chunk `c`'s lines that are not the base's; NONE when it holds the base's. */
function chunkChanges(now: ViewLists, base: NginxBase, c: number): ChunkChanges {
  const entries: string[] = [];
  const [linesNow, linesThen] = [now.lines[c] ?? [], base.lines[c] ?? []];
  if (linesNow !== linesThen) {
    for (let i = 0; i < linesNow.length; i++)
      if (linesNow[i] !== linesThen[i]) entries.push(linesNow[i]!);
  }
  const [credentialsNow, credentialsThen] = [now.credentials[c] ?? [], base.credentials[c] ?? []];
  const { written, dropped } =
    credentialsNow === credentialsThen
      ? { written: [], dropped: [] }
      : credentialChanges([credentialsNow], [credentialsThen]);
  const [certificatesNow, certificatesThen] = [
    now.certificates[c] ?? [],
    base.certificates[c] ?? [],
  ];
  const certificates =
    certificatesNow === certificatesThen
      ? []
      : certificateChanges(certificatesNow, certificatesThen);
  if (entries.length + written.length + dropped.length + certificates.length === 0) return NONE;
  return {
    entries,
    written: written.map(credentialLine),
    dropped: dropped.map((app) => `c ${app} `),
    certificates,
  };
}
