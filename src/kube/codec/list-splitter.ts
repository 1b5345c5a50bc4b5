// Splits a SecretList response body into its items, chunk by chunk, so that a list is handled
// item by item as it arrives: a 50,000-Secret list served whole from the watch cache (80 MiB of
// JSON) never exists in memory at once, as a string or as objects.
//
// It scans bytes for JSON structure only: `{ } [ ] " \` are ASCII and never part of a multi-byte
// UTF-8 sequence, so chunks may split anywhere. It does not validate what it does not keep: each
// item and the list's `metadata` are parsed by JSON.parse; anything else at the top level (kind,
// apiVersion) is skipped.

/** A top-level member whose value is kept whole: the list's metadata. */
const KEPT = "metadata";
const ITEMS = "items";

import { MAX_ITEM_BYTES } from "./list-reader.ts";

/** What one chunk completed: item texts in order. */
export interface SplitItems {
  readonly items: readonly string[];
}

/** The list's own fields, once the body ended well-formed. */
export interface ListEnvelope {
  /** The `metadata` value's JSON text, or null when the list had none. */
  readonly metadata: string | null;
}

export type SplitFailure = { readonly message: string };

/** Pushes chunks in order; `end()` checks the body was one complete object. */
export interface ListSplitter {
  push(chunk: Uint8Array): SplitItems | SplitFailure;
  end(): ListEnvelope | SplitFailure;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/** A splitter for one list body. */
export function createListSplitter(maxItemBytes: number = MAX_ITEM_BYTES): ListSplitter {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let seenTop = false;
  // The member of the top-level object being read: its key (collected while in a key string).
  let key = "";
  let readingKey = false;
  let expectKey = false;
  // Where the current kept value (an item, or the metadata) started, across chunks.
  let capture: "item" | "metadata" | null = null;
  let captureDepth = 0;
  let parts: Buffer[] = [];
  let partsBytes = 0;
  let metadata: string | null = null;
  let inItems = false;

  const keep = (chunk: Buffer, from: number, to: number): boolean => {
    partsBytes += to - from;
    if (partsBytes > maxItemBytes) return false;
    parts.push(chunk.subarray(from, to));
    return true;
  };
  // The usual item lies within one chunk: decode it in place rather than copying it first.
  const finish = (chunk: Buffer, from: number, to: number): string | null => {
    if (parts.length === 0)
      return to - from > maxItemBytes ? null : chunk.toString("utf8", from, to);
    if (!keep(chunk, from, to)) return null;
    const text = Buffer.concat(parts, partsBytes).toString("utf8");
    parts = [];
    partsBytes = 0;
    return text;
  };
  const tooLong = (): SplitFailure => ({
    message: `list item of ${partsBytes}+ bytes exceeds the item limit`,
  });

  return {
    push(input) {
      const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input);
      const items: string[] = [];
      let start = capture === null ? -1 : 0;
      let i = 0;
      // The next backslash at or after i, found once per stretch: searching again for every
      // string would scan the rest of the chunk each time (values rarely hold one).
      let slash = chunk.indexOf(BACKSLASH);
      while (i < chunk.length) {
        if (inString) {
          if (readingKey) {
            // Keys are short: collect them byte by byte.
            const c = chunk[i++]!;
            if (escaped) escaped = false;
            else if (c === BACKSLASH) escaped = true;
            else if (c === QUOTE) inString = readingKey = false;
            else key += String.fromCharCode(c);
            continue;
          }
          if (escaped) {
            escaped = false;
            i++;
            continue;
          }
          // Values are long (base64 data): jump to the next quote or backslash natively.
          const quote = chunk.indexOf(QUOTE, i);
          if (slash !== -1 && slash < i) slash = chunk.indexOf(BACKSLASH, i);
          if (slash !== -1 && (quote === -1 || slash < quote)) {
            escaped = true;
            i = slash + 1;
          } else if (quote !== -1) {
            inString = false;
            i = quote + 1;
          } else {
            i = chunk.length;
          }
          continue;
        }
        const c = chunk[i]!;
        if (c === QUOTE) {
          inString = true;
          if (depth === 1 && expectKey) {
            readingKey = true;
            expectKey = false;
            key = "";
          }
        } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
          if (depth === 0) {
            if (c !== OPEN_OBJECT || seenTop)
              return { message: "list body is not one JSON object" };
            seenTop = true;
            expectKey = true;
          } else if (depth === 1 && key === ITEMS && c === OPEN_ARRAY) {
            inItems = true;
          } else if (depth === 1 && key === KEPT && c === OPEN_OBJECT) {
            capture = "metadata";
            captureDepth = depth;
            start = i;
          } else if (depth === 2 && inItems && c === OPEN_OBJECT) {
            capture = "item";
            captureDepth = depth;
            start = i;
          }
          depth++;
        } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
          depth--;
          if (depth < 0) return { message: "list body has an unbalanced bracket" };
          if (capture !== null && depth === captureDepth) {
            const text = finish(chunk, start, i + 1);
            if (text === null) return tooLong();
            if (capture === "item") items.push(text);
            else metadata = text;
            capture = null;
            start = -1;
          } else if (depth === 1 && inItems && c === CLOSE_ARRAY) {
            inItems = false;
          }
        } else if (depth === 1 && c === COMMA) {
          expectKey = true;
        }
        i++;
      }
      if (capture !== null && !keep(chunk, start, chunk.length)) return tooLong();
      return { items };
    },
    end() {
      if (!seenTop || depth !== 0 || inString)
        return { message: "list body ended before its JSON object did" };
      return { metadata };
    },
  };
}
