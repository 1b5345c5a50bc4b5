// Turns an open watch response into a WatchStream: bytes → lines → decoded events.

import { err } from "../../result.ts";
import type { WatchItem, WatchStream } from "../cache/list-watch.ts";
import { createLineSplitter, type SplitLine } from "../codec/ndjson.ts";
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
    const splitter = createLineSplitter();
    try {
      if (closed) return;
      try {
        for await (const chunk of response.body) {
          if (closed) return;
          onActivity?.();
          for (const line of splitter.push(chunk as Buffer)) {
            yield decodeLine(line);
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
      for (const line of splitter.end()) yield decodeLine(line);
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
