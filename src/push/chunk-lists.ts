// A value per App chunk (a chunk's table lines, credential lines, certificates), kept while the
// chunk lives, and a view's list of them made from the last list made: a Secret change replaces
// one chunk of 1,563 at 100k Apps (`changedChunks`), so the next view's list is the last one
// copied with that chunk's value made, not a lookup per chunk.

import { changedChunks } from "../snapshot/chunk-changes.ts";

/**
 * `make`'s value for each chunk of a directory, in chunk order; the same list for the same
 * directory. Each value is made once per chunk object. Callers must not change the lists.
 */
export function chunkLists<C extends object, T>(
  make: (chunk: C, c: number) => T,
): (chunks: readonly C[]) => readonly T[] {
  const kept = new WeakMap<C, T>();
  const chunkValue = (chunk: C, c: number): T => {
    let value = kept.get(chunk);
    if (value === undefined) {
      value = make(chunk, c);
      kept.set(chunk, value);
    }
    return value;
  };
  let last: { readonly chunks: readonly C[]; readonly list: readonly T[] } | null = null;
  return (chunks) => {
    if (last?.chunks === chunks) return last.list;
    // A known change list means `chunks` was made from `last.chunks` by replacing slots: same length.
    const changed = last === null ? null : changedChunks(last.chunks, chunks);
    let list: T[];
    if (last === null || changed === null) {
      list = chunks.map(chunkValue);
    } else {
      list = last.list.slice();
      for (const c of changed) list[c] = chunkValue(chunks[c]!, c);
    }
    last = { chunks, list };
    return list;
  };
}
