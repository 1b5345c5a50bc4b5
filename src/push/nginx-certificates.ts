// nginx's certificates by SNI (ADR 56), as lines of the zero-hop table body
// (manifests/data-planes/nginx/zero-hop/replica-mirror.lua reads them): after the credentials,
//   n <name> <app>            an SNI name (an exact hostname or `*.suffix`) and the App serving it,
//                             in name order;
//   k <app> <id>;<chain>;<key> the App's certificate: its id, its PEM chain and PKCS#8 PEM key, each
//                             line break written `|` (PEM holds neither `|` nor `;`), in App order.
// Names point at an App, not at a certificate, so a rotation is the App's one `k` line; nginx
// parses a certificate once per worker and id. In a PATCH an empty value removes a line. The key
// is Secret bytes: a `k` line is never logged, and no error here carries one.

import { cachedPer } from "../cached-per.ts";
import type { PushView } from "../snapshot/types.ts";
import { type CertificateEntry, certificateEntries } from "./certificates.ts";

/** The `k` line of an entry: Secret bytes. One string per entry object, which Snapshots share. */
export const certificateLine = cachedPer((entry: CertificateEntry): string => {
  const { id, chain, key } = entry.certificate;
  return `k ${entry.app} ${id};${pemField(chain)};${pemField(key)}`;
});

const pemField = (pem: string): string => pem.trimEnd().replaceAll("\n", "|");

const nameLine = (name: string, app: string) => `n ${name} ${app}`;

/**
 * The certificate lines of a whole table (a PUT): every name's `n` line in name order (code
 * units), then every App's `k` line in App order.
 * Computed once per view; empty when no App has a served certificate.
 */
export const nginxCertificateLines = cachedPer((view: PushView): readonly string[] => {
  const entries = certificateEntries(view);
  if (entries.length === 0) return [];
  const names: [string, string][] = [];
  for (const e of entries) for (const name of e.names) names.push([name, e.app]);
  names.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [...names.map(([name, app]) => nameLine(name, app)), ...entries.map(certificateLine)];
});

/**
 * The lines that turn nginx's certificates from `then`'s to `now`'s (both `certificateEntries`
 * of views with one hostname index, so in the same App order): an App's `k` line when its
 * certificate is new or another, `n` lines for the names it gained, and empty values for what it
 * lost. Entries the two lists share as objects (a chunk no change touched) are skipped unread.
 */
export function certificateChanges(
  now: readonly CertificateEntry[],
  then: readonly CertificateEntry[],
): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < now.length || j < then.length) {
    const a = now[i];
    const b = then[j];
    if (a === b) {
      i++;
      j++;
    } else if (b === undefined || (a !== undefined && a.app < b.app)) {
      out.push(certificateLine(a!), ...a!.names.map((name) => nameLine(name, a!.app)));
      i++;
    } else if (a === undefined || b.app < a.app) {
      out.push(`k ${b.app} `, ...b.names.map((name) => `n ${name} `));
      j++;
    } else {
      if (a.certificate.id !== b.certificate.id) out.push(certificateLine(a));
      const before = new Set(b.names);
      for (const name of a.names) if (!before.delete(name)) out.push(nameLine(name, a.app));
      for (const name of before) out.push(`n ${name} `);
      i++;
      j++;
    }
  }
  return out;
}
