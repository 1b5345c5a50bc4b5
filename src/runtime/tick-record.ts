import { executionAsyncResource } from "node:async_hooks";

/**
 * Keeps one of Node's `process.nextTick` records alive for the life of the isolate it is called
 * in (ADR 21): the main thread's and the data thread's each need their own. Without one, V8 ended
 * up building every record through its runtime after start-up: 8–10 µs of each `/v1/route`
 * request's CPU in the bundle. Inside a nextTick callback, `executionAsyncResource()` is that
 * tick's record. Call it before anything else runs.
 */
export function keepTickRecord(): void {
  process.nextTick(() => {
    Object.defineProperty(globalThis, Symbol.for("replica-mirror.tick-record"), {
      value: executionAsyncResource(),
    });
  });
}
