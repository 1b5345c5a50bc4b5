// The streamed envelope (ADR 78): the same bytes as seal(), whatever the slices, and never a
// length other than the one its header announces.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Sealer, seal } from "../../src/state/seal.ts";
import { newKey } from "./fixtures.ts";

const key = newKey();

describe("Sealer", () => {
  it("gives seal()'s bytes for the same IV, whatever the slices", () => {
    const plaintext = randomBytes(3 * 1024 + 7);
    const iv = randomBytes(12);
    const sealer = new Sealer(plaintext.length, key, iv);
    const pieces = [sealer.header];
    for (const [from, to] of [
      [0, 1],
      [1, 1_000],
      [1_000, 1_000],
      [1_000, plaintext.length],
    ] as const)
      pieces.push(sealer.update(plaintext.subarray(from, to)));
    pieces.push(sealer.end());
    expect(Buffer.concat(pieces)).toEqual(seal(plaintext, key, iv));
  });

  it("refuses more plaintext, or less, than its header announces", () => {
    const more = new Sealer(4, key);
    more.update(Buffer.alloc(3));
    expect(() => more.update(Buffer.alloc(2))).toThrow(
      new RangeError("more plaintext than the header announces"),
    );
    const less = new Sealer(4, key);
    less.update(Buffer.alloc(3));
    expect(() => less.end()).toThrow(new RangeError("less plaintext than the header announces"));
  });
});
