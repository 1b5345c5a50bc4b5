// An order-free digest of a map's lines (ADR 60): how many lines, and two 32-bit sums of a hash of
// each line. The same lines in any order give the same sum, a line changed, lost or added changes
// it (but for a chance of about 2^-64), and neither side sorts: HAProxy's answer is summed as it
// is read, and the sum of a pushed view is the sum of its App chunks' sums, each computed once per
// chunk and kept while Snapshots share the chunk. At 100k Apps the sorted SHA-256 it replaces
// took the sidecar's main thread 150 ms a verification and 110 ms a view.
//
// A drift check, not an authenticator: whoever can write the map can read every credential in
// it (docs/security.md), so nothing here needs to resist a forger.

/** A sum of lines; the functions that add to it change it in place. */
export interface LineSum {
  count: number;
  a: number;
  b: number;
}

/** A new, empty sum. */
export const noLines = (): LineSum => ({ count: 0, a: 0, b: 0 });

/** MurmurHash3's finaliser: every input bit moves every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const A_SEED = 0x811c9dc5;
const B_SEED = 0x9747b28c;

/** Adds one line, given as its bytes `bytes[start, end)`, to `sum`. */
export function addBytes(sum: LineSum, bytes: Uint8Array, start: number, end: number): void {
  let a = A_SEED;
  let b = B_SEED;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  plus(sum, mix(a ^ (end - start)), mix(b));
}

/** Adds one line to `sum`; a line's characters are single bytes (latin1), as HAProxy lists them. */
export function addLine(sum: LineSum, line: string): void {
  let a = A_SEED;
  let b = B_SEED;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i) & 0xff;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  plus(sum, mix(a ^ line.length), mix(b));
}

/** Adds the sum `y` to `sum`. */
export function addSum(sum: LineSum, y: Readonly<LineSum>): void {
  sum.count += y.count;
  sum.a = (sum.a + y.a) >>> 0;
  sum.b = (sum.b + y.b) >>> 0;
}

function plus(sum: LineSum, a: number, b: number): void {
  sum.count++;
  sum.a = (sum.a + a) >>> 0;
  sum.b = (sum.b + b) >>> 0;
}

/** The sum as the text a digest compares. */
export const sumText = (sum: LineSum): string =>
  `${sum.count}:${sum.a.toString(16)}:${sum.b.toString(16)}`;

const chunkSums = new WeakMap<object, Readonly<LineSum>>();

/**
 * The sum of `lines` (one App chunk's, as the table keeps them), of `text` of each: computed once
 * per chunk list, which Snapshots of one Registry share while the chunk is unchanged.
 */
export function chunkSum<T>(lines: readonly T[], text: (line: T) => string): Readonly<LineSum> {
  let sum = chunkSums.get(lines);
  if (sum === undefined) {
    const made = noLines();
    for (const line of lines) addLine(made, text(line));
    chunkSums.set(lines, made);
    sum = made;
  }
  return sum;
}
