// Turns an open watch response into a WatchStream: bytes → lines (JSON) or frames (protobuf, the
// encoding asked for first, ADR 65) → decoded events. The response's Content-Type picks.

import { err } from "../../result.ts";
import type { WatchItem, WatchStream } from "../cache/list-watch.ts";
import { createLineSplitter, type SplitLine } from "../codec/ndjson.ts";
import { createFrameSplitter, decodeWatchFrame, type Frame } from "../codec/protobuf-watch.ts";
import { isProtobuf } from "../codec/protobuf-wire.ts";
import { decodeWatchLine } from "../codec/wire.ts";
import type { OpenResponse } from "./transport.ts";

function decodeLine(line: SplitLine): WatchItem {
  if (line.kind === "overlong") {
    return err({
      kind: "decode",
      message: `watch line of ${line.bytes}+ bytes exceeds the line limit`,
      bytes: line.bytes,
    });
  }
  const event = decodeWatchLine(line.text);
  return event.ok
    ? event
    : err({ kind: "decode", message: event.error.message, bytes: line.bytes });
}

function decodeFrame(frame: Frame): WatchItem {
  if (frame.kind === "overlong") {
    return err({
      kind: "decode",
      message: `watch frame of ${frame.bytes} bytes exceeds the frame limit`,
      bytes: frame.bytes,
    });
  }
  const event = decodeWatchFrame(frame.body);
  return event.ok
    ? event
    : err({ kind: "decode", message: event.error.message, bytes: frame.body.length });
}

/** Chunks in, decoded items out, in either encoding. */
interface WatchDecoder {
  push(chunk: Buffer): WatchItem[];
  /** What the body's end leaves: the unterminated last line, or a truncated frame. */
  end(): WatchItem[];
}

function watchDecoder(contentType: string | undefined): WatchDecoder {
  if (isProtobuf(contentType)) {
    const frames = createFrameSplitter();
    return {
      push: (chunk) => frames.push(chunk).map(decodeFrame),
      end() {
        const bytes = frames.end();
        if (bytes === 0) return [];
        return [
          err({ kind: "decode", message: `watch frame truncated after ${bytes} bytes`, bytes }),
        ];
      },
    };
  }
  const lines = createLineSplitter();
  return {
    push: (chunk) => lines.push(chunk).map(decodeLine),
    end: () => lines.end().map(decodeLine),
  };
}

/**
 * Streams the events of response. Aborting signal or calling close() destroys the connection
 * and ends iteration quietly; a connection that fails on its own ends it with a `network` item.
 */
export function createWatchStream(
  response: OpenResponse,
  signal: AbortSignal,
  onActivity?: () => void,
): WatchStream {
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    signal.removeEventListener("abort", close);
    response.destroy();
  };
  if (signal.aborted) close();
  else signal.addEventListener("abort", close, { once: true });

  async function* items(): AsyncGenerator<WatchItem> {
    const decoder = watchDecoder(response.contentType);
    try {
      if (closed) return;
      try {
        for await (const chunk of response.body) {
          if (closed) return;
          onActivity?.();
          for (const item of decoder.push(chunk as Buffer)) {
            yield item;
            if (closed) return;
          }
        }
      } catch (e) {
        // Reading a destroyed response throws; after close() that is the expected ending.
        if (!closed)
          yield err({ kind: "network", message: e instanceof Error ? e.message : String(e) });
        return;
      }
      if (closed) return;
      if (!response.body.complete) {
        yield err({
          kind: "network",
          message: "watch connection closed before the response ended",
        });
        return;
      }
      for (const item of decoder.end()) yield item;
    } finally {
      close();
    }
  }

  const iterator = items();
  return {
    [Symbol.asyncIterator]: () => iterator,
    close,
  };
}
