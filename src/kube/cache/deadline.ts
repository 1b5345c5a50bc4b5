// An inactivity deadline: fires when nothing happened for a whole window.

import type { Clock } from "../../clock.ts";

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
