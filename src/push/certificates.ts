// The certificates a zero-hop proxy serves by SNI (ADR 56): each App's served certificate, for
// the hostnames and wildcards the App holds in the hostname index. A hostname another App won
// (a conflict) is not the loser's: a client asking for it never gets the loser's certificate.
// Derived per App chunk and kept while the chunk lives, as the table's lines are (table-lines.ts).

import { cachedPer } from "../cached-per.ts";
import type { ServedCertificate } from "../snapshot/certificate.ts";
import type { PushApp, PushView, RouteView } from "../snapshot/types.ts";
import { chunkLists } from "./chunk-lists.ts";
import { keysOf } from "./table-lines.ts";

/** One App's certificate and the SNI names it is served for. */
export interface CertificateEntry {
  readonly app: string;
  readonly certificate: ServedCertificate;
  /** Exact hostnames and `*.suffix` wildcards, sorted; never empty. */
  readonly names: readonly string[];
}

type Chunk = readonly PushApp[];

const NO_ENTRIES: readonly CertificateEntry[] = Object.freeze([]);

// Per hostname index (one per Registry): the entries of each App chunk.
const entriesPerChunk = cachedPer((routes: RouteView["routes"]) => {
  const keys = keysOf(routes);
  return chunkLists((chunk: Chunk, c: number) => entriesOf(chunk, keys[c] ?? []));
});

/** `certificateEntries` per App chunk, in slot order. Callers must not change the lists. */
export const certificateEntryLists = (view: PushView): readonly (readonly CertificateEntry[])[] =>
  entriesPerChunk(view.routes)(view.apps.chunks);

/**
 * Every served certificate of `view`, in slot order (by App name), each with the names its App
 * holds; an App that holds no name, or has no served certificate, has no entry. Callers must
 * not change the list.
 */
export const certificateEntries = cachedPer((view: PushView): readonly CertificateEntry[] => {
  const lists = certificateEntryLists(view);
  const out: CertificateEntry[] = [];
  for (let c = 0; c < lists.length; c++) {
    const entries = lists[c]!;
    for (let i = 0; i < entries.length; i++) out.push(entries[i]!);
  }
  return out.length === 0 ? NO_ENTRIES : Object.freeze(out);
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
