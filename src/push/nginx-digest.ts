// The digest nginx gives of the table it holds (GET /replica-mirror/digest, ADR 67): how many
// lines, and two 32-bit sums over the lines of the CRC-32 of each, h and h*h (mod 2^32), each line
// exactly as the whole table's body writes it (without its line break), "revision <n>" included.
// Order-free, so neither side keeps an order or sorts, and nginx adds each line as it reads its
// key from the dict, a few hundred at a time between yields, with no body built and no hash of
// 10 MB at once (at 100k Apps the SHA-1 of the rebuilt body held nginx's worker for hundreds of
// ms). The sidecar's side is the sum of its App chunks' sums, each computed once per chunk list
// and kept while Snapshots share it. CRC-32 is nginx's ngx.crc32_long and zlib's crc32 (UTF-8).
//
// A drift check, not an authenticator, as line-sum.ts: whoever can write the table can read it.

import { crc32 } from "node:zlib";
import type { PushView } from "../snapshot/types.ts";
import { nginxCertificateLines } from "./nginx-certificates.ts";
import { credentialText, nginxCredentials, nginxLines } from "./nginx-table.ts";

interface CrcSum {
  count: number;
  a: number;
  b: number;
}

function addLine(sum: CrcSum, line: string): void {
  const h = crc32(line);
  sum.count++;
  sum.a = (sum.a + h) >>> 0;
  sum.b = (sum.b + Math.imul(h, h)) >>> 0;
}

const hex = (n: number) => n.toString(16).padStart(8, "0");

/** The digest's text, as nginx writes it: `<count>:<a>:<b>`, the sums as 8 hex digits. */
const sumText = (sum: CrcSum): string => `${sum.count}:${hex(sum.a)}:${hex(sum.b)}`;

/** What nginx's answer looks like. */
export const NGINX_DIGEST = /^\d+:[0-9a-f]{8}:[0-9a-f]{8}$/;

const listSums = new WeakMap<readonly string[], Readonly<CrcSum>>();

/**
 * Lines hashed between two turns of the event loop by the sliced digest: under 1 ms of the main
 * thread (the first digest of a view of 100k Apps, 200k lines, took 139 ms of CPU: smoke-verify,
 * 12-07 06:55Z), which is what a rotation's push may wait for while it runs.
 */
const SLICE_LINES = 1_024;

/** The sum of a list of lines, computed once per list; `fresh` counts the lines it hashed. */
function listSum(lines: readonly string[], fresh: { lines: number }): Readonly<CrcSum> {
  let sum = listSums.get(lines);
  if (sum === undefined) {
    const made = { count: 0, a: 0, b: 0 };
    for (const line of lines) addLine(made, line);
    fresh.lines += lines.length;
    listSums.set(lines, made);
    sum = made;
  }
  return sum;
}

/** The lists of `view`'s whole table body: entries, credentials and certificates. */
const bodyLists = (view: PushView): readonly (readonly string[])[] => [
  ...nginxLines(view),
  ...nginxCredentials(view).map(credentialText),
  nginxCertificateLines(view),
];

function total(view: PushView): CrcSum {
  const sum = { count: 0, a: 0, b: 0 };
  addLine(sum, `revision ${view.revision}`);
  return sum;
}

function add(sum: CrcSum, y: Readonly<CrcSum>): void {
  sum.count += y.count;
  sum.a = (sum.a + y.a) >>> 0;
  sum.b = (sum.b + y.b) >>> 0;
}

/**
 * The digest nginx gives while it answers from `view`'s table, whether that came whole or as a
 * whole table and its changes: the lines of `nginxTableBody(view)`, in any order.
 */
export function nginxTableDigest(view: PushView): string {
  const sum = total(view);
  const fresh = { lines: 0 };
  for (const lines of bodyLists(view)) add(sum, listSum(lines, fresh));
  return sumText(sum);
}

/**
 * `nginxTableDigest(view)`, with a turn of the event loop every SLICE_LINES lines hashed anew
 * (the lists no earlier view shared: all of them at the first verification, 200k lines at 100k
 * Apps).
 */
export async function nginxTableDigestSliced(view: PushView): Promise<string> {
  const sum = total(view);
  const fresh = { lines: 0 };
  for (const lines of bodyLists(view)) {
    add(sum, listSum(lines, fresh));
    if (fresh.lines >= SLICE_LINES) {
      fresh.lines = 0;
      await new Promise(setImmediate);
    }
  }
  return sumText(sum);
}
