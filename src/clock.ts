// Time as a parameter, so backoff, jitter and deadlines are tested without waiting.

/** A time source with cancellable one-shot timers. */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences are meaningful. */
  now(): number;
  /** Calls fn once after ms; the returned function cancels it (idempotent). */
  setTimer(ms: number, fn: () => void): () => void;
}

/**
 * Real time: performance.now() and setTimeout. setTimeout counts from the event loop's cached
 * time, which lags the real one, so it can fire a few milliseconds early by performance.now():
 * a timer that would is set again for the rest, because a server's Retry-After is a floor.
 */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(ms, fn) {
    const due = performance.now() + ms;
    let timer: NodeJS.Timeout;
    const fire = (): void => {
      const left = due - performance.now();
      if (left > 0) timer = setTimeout(fire, Math.ceil(left));
      else fn();
    };
    timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};

/** Resolves after ms, or as soon as signal aborts; leaves no timer behind either way. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      cancel();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const cancel = clock.setTimer(ms, done);
    signal.addEventListener("abort", done, { once: true });
  });
}
