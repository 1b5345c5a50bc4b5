// One watch request from open to end (client-go's watchHandler): the timeout it asks the server
// for, the inactivity deadline that catches a half-open connection, and how it ended.

import { startDeadline } from "./deadline.ts";
import type { ListWatch, WatchEvent, WatchOptions, WatchStream } from "./list-watch.ts";
import type { ReflectorSettings } from "./reflector-options.ts";
import { NO_HEADERS, statusError, type WatchOutcome, watchFailed } from "./restart-policy.ts";

/** A watch event that carries something to deliver: all but ERROR, which ends the watch. */
export type DeliveredEvent = Exclude<WatchEvent, { readonly type: "ERROR" }>;

/**
 * The watch's timing: the server is asked to end it after a random time in [T, 2T) seconds
 * (T = watchTimeoutSeconds), and silence longer than that plus inactivityGraceMs tears it down.
 */
type WatchTiming = Pick<
  ReflectorSettings,
  "watchTimeoutSeconds" | "inactivityGraceMs" | "clock" | "random"
>;

export interface WatchOnceOptions extends WatchTiming {
  readonly listWatch: ListWatch;
  /** Where the watch starts, and whether it is a streaming list. */
  readonly from: Pick<WatchOptions, "resourceVersion" | "sendInitialEvents">;
  /** The request's own controller; the deadline aborts it too. */
  readonly controller: AbortController;
  /** Aborted when the owner stops: the watch then ends with undefined. */
  readonly stopped: AbortSignal;
  /** The response headers arrived. */
  readonly onOpened: () => void;
  /** Every event but ERROR, in server order. */
  readonly onEvent: (event: DeliveredEvent) => void;
}

/** Runs one watch until it ends and says how; undefined when stopped. Throws only if onEvent does. */
export async function watchOnce(o: WatchOnceOptions): Promise<WatchOutcome | undefined> {
  const timeoutSeconds = Math.floor(o.watchTimeoutSeconds * (1 + o.random()));
  // A healthy watch is never silent longer than its own timeoutSeconds: the server ends it
  // then. Past that plus a grace, the connection is presumed half-open.
  const deadlineMs = timeoutSeconds * 1000 + o.inactivityGraceMs;
  let stream: WatchStream | undefined;
  let inactive = false;
  const deadline = startDeadline(o.clock, deadlineMs, () => {
    inactive = true;
    o.controller.abort();
    stream?.close();
  });
  const started = o.clock.now();
  let events = 0;
  const end = (rest: Omit<WatchOutcome, "events" | "elapsedMs">): WatchOutcome => ({
    ...rest,
    events,
    elapsedMs: o.clock.now() - started,
  });
  try {
    const opened = await o.listWatch.watch({
      ...o.from,
      timeoutSeconds,
      signal: o.controller.signal,
      onActivity: deadline.touch,
    });
    if (o.stopped.aborted) return undefined;
    if (!opened.ok) return end(inactive ? NO_HEADERS : watchFailed(opened.error));
    stream = opened.value;
    deadline.touch();
    o.onOpened();
    for await (const item of stream) {
      deadline.touch();
      if (!item.ok)
        return end({
          reason: item.error.kind === "decode" ? "decode" : "dropped",
          error: item.error,
        });
      const event = item.value;
      if (event.type === "ERROR") return end(watchFailed(statusError(event.status)));
      events += 1;
      o.onEvent(event);
    }
    if (o.stopped.aborted) return undefined;
    if (inactive) return end({ reason: "inactive" });
    // The server's end at its timeoutSeconds is the normal case; earlier is a plain close.
    return end({
      reason: o.clock.now() - started >= timeoutSeconds * 900 ? "timeout" : "closed",
    });
  } finally {
    deadline.cancel();
    stream?.close();
  }
}
