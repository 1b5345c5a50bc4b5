// A sort that gives the event loop a turn every SLICE elements: the state file's 100k App Secrets
// sorted in one call held the main thread 60-90 ms (20 ms when already in order), long enough to
// delay a rotation that arrives meanwhile (ADR 78).

/** Elements sorted or merged between two turns of the event loop. */
export const SORT_SLICE = 2_048;

const turn = (): Promise<void> => new Promise(setImmediate);

/**
 * `items` sorted by `compare` into a new array, stable, as `[...items].sort(compare)`: runs of
 * SORT_SLICE sorted one per turn, then merged pairwise, SORT_SLICE elements a turn.
 */
export async function sortedInSlices<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  slice: number = SORT_SLICE,
): Promise<T[]> {
  let from: T[] = [];
  for (let start = 0; start < items.length; start += slice) {
    const run = items.slice(start, start + slice).sort(compare);
    for (const item of run) from.push(item);
    if (start + slice < items.length) await turn();
  }
  let to: T[] = new Array<T>(from.length);
  let budget = slice;
  for (let width = slice; width < from.length; width *= 2) {
    for (let left = 0; left < from.length; left += 2 * width) {
      const middle = Math.min(left + width, from.length);
      const end = Math.min(left + 2 * width, from.length);
      let [i, j, k] = [left, middle, left];
      while (k < end) {
        // `<= 0` takes the left run's element on ties: stable.
        const takeLeft = j >= end || (i < middle && compare(from[i]!, from[j]!) <= 0);
        to[k++] = takeLeft ? from[i++]! : from[j++]!;
        if (--budget === 0) {
          budget = slice;
          await turn();
        }
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
