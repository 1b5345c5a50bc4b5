// Which App chunks a table's chunk directory replaced, remembered as `replaceSlots` makes it, so
// that whoever holds an earlier directory reads the chunks that changed since instead of comparing
// all of them: at 100k Apps a directory holds 1,563 chunks, and each of the half-dozen walks a
// Secret change made (the data thread's update, the refusals entered, a zero-hop table's lines,
// credentials, certificates and PATCH) cost 0.1-0.4 ms of the change's (12-07).
// The record holds its predecessor weakly: a chain of directories never keeps old Snapshots alive,
// and a predecessor collected, or one further back than MAX_STEPS, makes the answer unknown.

type Directory = readonly object[];

interface Replaced {
  readonly previous: WeakRef<Directory>;
  readonly chunks: readonly number[];
}

const replaced = new WeakMap<Directory, Replaced>();

/** Directories walked back at most; past that, every chunk is compared. */
const MAX_STEPS = 32;

/** Records that `next` is `previous` with the chunks at `chunks` replaced. */
export function recordReplaced(
  previous: Directory,
  next: Directory,
  chunks: readonly number[],
): void {
  replaced.set(next, { previous: new WeakRef(previous), chunks });
}

/**
 * The indexes of the chunks of `to` that may not be `from`'s, ascending, when `to` was made from
 * `from` by `replaceSlots` (at most MAX_STEPS times over); null when that is not known. A chunk
 * listed may be the same object again: callers compare it.
 */
export function changedChunks(from: Directory, to: Directory): readonly number[] | null {
  if (from === to) return [];
  const changed = new Set<number>();
  let at: Directory = to;
  for (let step = 0; step < MAX_STEPS; step++) {
    const record = replaced.get(at);
    if (record === undefined) return null;
    for (const c of record.chunks) changed.add(c);
    const previous = record.previous.deref();
    if (previous === undefined) return null;
    if (previous === from) return [...changed].sort((a, b) => a - b);
    at = previous;
  }
  return null;
}

/**
 * Calls `visit` with each index whose chunk in `to` is not the same object as in `from`, in
 * ascending order: the recorded changes when known, else a comparison of every chunk. The two
 * directories must be of one hostname index (the same length and slots).
 */
export function forChangedChunks<A extends object>(
  from: readonly A[],
  to: readonly A[],
  visit: (c: number) => void,
): void {
  const known = changedChunks(from, to);
  if (known !== null) {
    for (const c of known) if (to[c] !== from[c]) visit(c);
    return;
  }
  for (let c = 0; c < to.length; c++) if (to[c] !== from[c]) visit(c);
}
