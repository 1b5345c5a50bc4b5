/**
 * Seeded randomness for the chaos modes: where a watch line is split, how many lines are coalesced,
 * garbage bytes.
 */

/** mulberry32: a small, fast, seedable PRNG; the same seed replays the same chunk boundaries. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts `buf` into 2–5 non-empty pieces at random offsets (a 1-byte buffer stays whole). */
export function splitRandomly(buf: Buffer, random: () => number): Buffer[] {
  if (buf.length < 2) return [buf];
  const want = Math.min(buf.length - 1, 1 + Math.floor(random() * 4));
  const cuts = new Set<number>();
  while (cuts.size < want) cuts.add(1 + Math.floor(random() * (buf.length - 1)));
  const sorted = [...cuts].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let prev = 0;
  for (const c of sorted) {
    pieces.push(buf.subarray(prev, c));
    prev = c;
  }
  pieces.push(buf.subarray(prev));
  return pieces;
}

/** How many queued lines the coalesce mode writes at once: 2–5. */
export function coalesceCount(random: () => number): number {
  return 2 + Math.floor(random() * 4);
}

/** `n` random bytes, high bytes included so the line is not valid UTF-8 JSON. */
export function garbageBytes(n: number, random: () => number): Buffer {
  return Buffer.from(
    Array.from({ length: n }, () => Math.floor(random() * 256)).map((b) => (b === 0x0a ? 0xff : b)),
  );
}
