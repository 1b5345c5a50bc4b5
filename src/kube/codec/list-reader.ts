import type { Result } from "../../result.ts";
import type { ListPage, SecretObject } from "../cache/list-watch.ts";

/**
 * One list body in one encoding. `push` takes chunks in order and returns the items they
 * completed; `end` checks the body was whole and returns the list's metadata. A failure is a
 * message naming where, never a value.
 */
export interface ListReader {
  push(chunk: Buffer): Result<readonly SecretObject[], string>;
  end(): Result<ListPage, string>;
}

/**
 * The longest list item either reader buffers: a Secret holds at most 1 MiB of data, under
 * 1.5 MB as base64 JSON, so an item far longer is not a Secret and is refused rather than
 * buffered without bound.
 */
export const MAX_ITEM_BYTES = 8 * 1024 * 1024;
