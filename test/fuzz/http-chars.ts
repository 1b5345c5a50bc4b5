// The characters generated requests are made of, as latin1 codes (how Node reads header bytes).

import fc from "fast-check";

/** Codes Node's parser accepts in a header value (no controls besides HTAB), as latin1. */
export const valueChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x20) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
);
/** Any code, controls included: mostly what a value may hold, sometimes what it may not. */
export const anyChar = fc.oneof(
  { weight: 6, arbitrary: valueChar },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }) },
  { weight: 1, arbitrary: fc.constant(0x7f) },
);
/** A string of up to `max` of these codes. */
export const latin1 = (chars: fc.Arbitrary<number>, max: number) =>
  fc.array(chars, { maxLength: max }).map((cs) => String.fromCharCode(...cs));
/** Whether Node's parser accepts `v` as a header value. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls Node refuses in a header value
export const isWellFormedValue = (v: string) => !/[\x00-\x08\x0a-\x1f\x7f]/.test(v);

/** A weighted choice for fc.oneof. */
export const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
