// The certificates a zero-hop proxy serves by SNI (ADR 56): each App's served certificate, for
// the hostnames and wildcards the App holds in the hostname index. A hostname another App won
// (a conflict) is not the loser's: a client asking for it never gets the loser's certificate.
// Derived per App chunk and kept while the chunk lives, as the table's lines are (table-lines.ts).

import { cachedPer } from "../cached-per.ts";
import type { ServedCertificate } from "../snapshot/certificate.ts";
import type { PushApp, PushView, RouteView } from "../snapshot/types.ts";
import { keysOf } from "./table-lines.ts";

/** One App's certificate and the SNI names it is served for. */
export interface CertificateEntry {
  readonly app: string;
  readonly certificate: ServedCertificate;
  /** Exact hostnames and `*.suffix` wildcards, sorted; never empty. */
  readonly names: readonly string[];
}

type Chunk = readonly PushApp[];

const chunkEntries = cachedPer(
  (_: RouteView["routes"]) => new WeakMap<Chunk, readonly CertificateEntry[]>(),
);

/**
 * Every served certificate of `view`, in slot order (by App name), each with the names its App
 * holds; an App that holds no name, or has no served certificate, has no entry. Callers must
 * not change the list.
 */
export const certificateEntries = cachedPer((view: PushView): readonly CertificateEntry[] => {
  const keys = keysOf(view.routes);
  const cache = chunkEntries(view.routes);
  const out: CertificateEntry[] = [];
  view.apps.chunks.forEach((chunk, c) => {
    let entries = cache.get(chunk);
    if (entries === undefined) {
      entries = entriesOf(chunk, keys[c] ?? []);
      cache.set(chunk, entries);
    }
    out.push(...entries);
  });
  return Object.freeze(out);
});

function entriesOf(
  chunk: Chunk,
  keys: readonly { readonly kind: string; readonly name: string; readonly index: number }[],
): readonly CertificateEntry[] {
  const names = new Map<number, string[]>();
  for (const k of keys) {
    if (chunk[k.index]?.certificate?.served == null) continue;
    const list = names.get(k.index) ?? [];
    names.set(k.index, list);
    list.push(k.kind === "wildcard" ? `*.${k.name}` : k.name);
  }
  return Object.freeze(
    [...names.keys()]
      .sort((a, b) => a - b)
      .map((index) => {
        const app = chunk[index]!;
        return Object.freeze({
          app: app.name,
          certificate: app.certificate!.served!,
          names: Object.freeze(names.get(index)!.sort()),
        });
      }),
  );
}
