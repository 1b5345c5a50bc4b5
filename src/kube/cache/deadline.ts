// An inactivity deadline: fires when nothing happened for a whole window.

import type { Clock } from "../../clock.ts";
import { err, type Result } from "../../result.ts";
import type { ApiError } from "./list-watch.ts";

/** A running deadline; touch() restarts the window, cancel() disarms it for good. */
interface Deadline {
  touch(): void;
  cancel(): void;
}

/**
 * Calls onExpire once, when windowMs pass without a touch(). One timer at a time: a touch only
 * records the time, so a burst of events costs no timer churn.
 */
export function startDeadline(clock: Clock, windowMs: number, onExpire: () => void): Deadline {
  let last = clock.now();
  let cancelled = false;
  let cancelTimer = (): void => {};
  const arm = (ms: number): void => {
    cancelTimer = clock.setTimer(ms, () => {
      if (cancelled) return;
      const idle = clock.now() - last;
      if (idle < windowMs) return arm(windowMs - idle);
      cancelled = true;
      onExpire();
    });
  };
  arm(windowMs);
  return {
    touch() {
      last = clock.now();
    },
    cancel() {
      cancelled = true;
      cancelTimer();
    },
  };
}

/**
 * Runs one request that aborts through `controller` when `windowMs` pass without its
 * onActivity; a request cut off that way fails as a network error that says so.
 */
export async function withDeadline<T>(
  clock: Clock,
  windowMs: number,
  controller: AbortController,
  call: (signal: AbortSignal, onActivity: () => void) => Promise<Result<T, ApiError>>,
): Promise<Result<T, ApiError>> {
  let timedOut = false;
  const deadline = startDeadline(clock, windowMs, () => {
    timedOut = true;
    controller.abort();
  });
  try {
    const result = await call(controller.signal, deadline.touch);
    if (!result.ok && timedOut)
      return err({ kind: "network", message: `no data for ${windowMs} ms` });
    return result;
  } finally {
    deadline.cancel();
  }
}
