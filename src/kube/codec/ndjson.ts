// Splits a watch response body into lines. Chunk boundaries fall anywhere (mid-line,
// mid-UTF-8 character), and one chunk may carry many lines.

/** A complete line (without its newline), or a line dropped for exceeding the length limit. */
export type SplitLine =
  | { readonly kind: "line"; readonly text: string; readonly bytes: number }
  | { readonly kind: "overlong"; readonly bytes: number };

/** Accumulates bytes and hands back complete lines; blank lines are skipped. */
interface LineSplitter {
  /** Lines completed by this chunk, in order. */
  push(chunk: Uint8Array): SplitLine[];
  /** The unterminated remainder, if any, once the body has ended. */
  end(): SplitLine[];
}

const NEWLINE = 0x0a;

/**
 * 16 MiB: a Secret is at most 1 MiB of data, about 1.4 MB as base64 JSON; anything far longer
 * is not a Secret event and is dropped rather than buffered without bound.
 */
const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Creates a splitter that reports lines longer than maxLineBytes as `overlong` without keeping them. */
export function createLineSplitter(maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): LineSplitter {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overlong = false;

  const take = (tail: Buffer): SplitLine | undefined => {
    const bytes = pendingBytes + tail.length;
    const wasOverlong = overlong || bytes > maxLineBytes;
    const parts = pending;
    pending = [];
    pendingBytes = 0;
    overlong = false;
    if (wasOverlong) return { kind: "overlong", bytes };
    const line = parts.length === 0 ? tail : Buffer.concat([...parts, tail], bytes);
    const text = line.toString("utf8").trim();
    return text === "" ? undefined : { kind: "line", text, bytes };
  };

  return {
    push(chunk) {
      const buf = Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const out: SplitLine[] = [];
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, start); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
        const line = take(buf.subarray(start, nl));
        if (line !== undefined) out.push(line);
        start = nl + 1;
      }
      if (start < buf.length) {
        const rest = buf.subarray(start);
        pendingBytes += rest.length;
        if (overlong || pendingBytes > maxLineBytes) {
          overlong = true;
          pending = [];
        } else {
          pending.push(rest);
        }
      }
      return out;
    },
    end() {
      if (pendingBytes === 0) return [];
      const line = take(Buffer.alloc(0));
      return line === undefined ? [] : [line];
    },
  };
}
