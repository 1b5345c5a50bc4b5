import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import {
  checkValue,
  INLINE_CHECKER,
  type RegistryChecker,
  type ValueCheck,
} from "../mirror/registry-checker.ts";
import type { CheckedUnder } from "../registry/rules.ts";
import { err, ok } from "../result.ts";
import { fromRegistryColumns } from "../state/registry-columns.ts";
import type { CheckAnswer, CheckRequest } from "./registry-check-messages.ts";

// The bundle defines this as the built thread's file, beside the chunk that holds this module
// (scripts/build.ts); the sources start the TypeScript entry.
declare const REPLICA_MIRROR_REGISTRY_THREAD: string | undefined;
const ENTRY = new URL(
  typeof REPLICA_MIRROR_REGISTRY_THREAD === "string"
    ? REPLICA_MIRROR_REGISTRY_THREAD
    : "./registry-check-worker.ts",
  import.meta.url,
);

/**
 * Document bytes (a gzip value's decompressed size) from which a check goes to the thread: 50k-60k
 * Apps of one hostname, checked inline in ~0.2 s. Below, the main thread's check is shorter
 * than what a thread costs when every replica of a fleet spawns one at the same edit (ADR 88).
 */
export const INLINE_BELOW_BYTES = 8 * 1024 * 1024;

/**
 * A value's document size: a gzip value's decompressed size as its trailer states it (modulo
 * 2^32, the last member's only: a guess of where to check, never a bound), else its length.
 */
export function documentBytes(value: string): number {
  const n = value.length;
  if (n < 18 || value.charCodeAt(0) !== 0x1f || value.charCodeAt(1) !== 0x8b) return n;
  const byte = (i: number) => value.charCodeAt(n - 4 + i);
  return (byte(0) | (byte(1) << 8) | (byte(2) << 16)) + byte(3) * 2 ** 24;
}

export interface RegistryThreadOptions {
  /** Told once if the thread cannot start or ends; never a value's bytes. */
  readonly log: Pick<Logger, "warn">;
  /** Default INLINE_BELOW_BYTES; 0 sends every value to the thread. */
  readonly inlineBelow?: number;
  /**
   * Every check runs inline until this settles (the first Snapshot served): a cold start's first
   * check was faster on the main thread, the lists it overlaps busy on every core (ADR 88).
   */
  readonly after?: Promise<unknown>;
  /** Default: the check thread's entry; tests give one that fails. */
  readonly spawn?: () => Worker;
}

interface Waiting {
  readonly request: CheckRequest;
  readonly resolve: (check: ValueCheck) => void;
  readonly reject: (bug: unknown) => void;
}

/**
 * Checks big Registry values on a thread of its own, so that the main thread keeps serving
 * changes meanwhile (ADR 88); small ones on the calling thread. The thread is spawned when a
 * check needs it, checks one value at a time in the order asked, ends once none waits, never
 * keeps the process alive, and ends with `close`. If it cannot start or ends, every check from then on,
 * and those it had not answered, run on the calling thread.
 */
export class RegistryThread implements RegistryChecker {
  readonly #options: RegistryThreadOptions;
  readonly #inlineBelow: number;
  readonly #waiting = new Map<number, Waiting>();
  #worker: Worker | null = null;
  /** The thread failed or was closed: no other is started. */
  #gone = false;
  #next = 0;
  #due: boolean;

  constructor(options: RegistryThreadOptions) {
    this.#options = options;
    this.#inlineBelow = options.inlineBelow ?? INLINE_BELOW_BYTES;
    this.#due = options.after === undefined;
    const due = () => {
      this.#due = true;
    };
    void options.after?.then(due, due);
  }

  check(value: string, under: CheckedUnder): Promise<ValueCheck> {
    const threaded = this.#due && documentBytes(value) >= this.#inlineBelow;
    const worker = threaded ? this.#started() : null;
    if (worker === null) return INLINE_CHECKER.check(value, under);
    const request = { id: ++this.#next, value, under };
    const { promise, resolve, reject } = Promise.withResolvers<ValueCheck>();
    this.#waiting.set(request.id, { request, resolve, reject });
    worker.postMessage(request);
    return promise;
  }

  /** Ends the thread; a check it had not answered runs on the calling thread. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#gone = true;
    this.#worker = null;
    this.#inline();
    await worker?.terminate();
  }

  #started(): Worker | null {
    if (this.#worker !== null || this.#gone) return this.#worker;
    let worker: Worker;
    try {
      worker = this.#options.spawn?.() ?? new Worker(ENTRY);
    } catch (e) {
      this.#failed(e);
      return null;
    }
    worker.unref();
    // A retired thread's end is not a failure: only the current one's counts.
    const failed = (e: unknown) => {
      if (this.#worker === worker) this.#failed(e);
    };
    worker.on("message", (answer: CheckAnswer) => this.#answered(answer));
    worker.on("messageerror", failed);
    worker.once("error", failed);
    worker.once("exit", (code) => failed(new Error(`exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #answered(answer: CheckAnswer): void {
    const waiting = this.#waiting.get(answer.id);
    if (waiting === undefined) return;
    this.#waiting.delete(answer.id);
    if (this.#waiting.size === 0) this.#retire();
    if (!("columns" in answer)) {
      const { contentHash, refused } = answer;
      waiting.resolve({ contentHash, parsed: err(refused) });
      return;
    }
    const decoded = fromRegistryColumns(answer.columns);
    if (!decoded.ok) {
      waiting.reject(new Error(`the Registry check thread's columns: ${decoded.error}`));
      return;
    }
    const { contentHash, registry, refused } = decoded.value;
    waiting.resolve({ contentHash, parsed: ok({ registry, refused: Object.freeze(refused) }) });
  }

  /**
   * Ends an idle thread: a check of 100k Apps leaves its isolate 47 MiB of RSS even after a full
   * collection, 220 MiB without, held until the next Registry change; spawning one costs that
   * change 45-70 ms, on its own thread (ADR 88).
   */
  #retire(): void {
    const worker = this.#worker;
    this.#worker = null;
    void worker?.terminate();
  }

  #failed(e: unknown): void {
    if (this.#gone) return;
    this.#gone = true;
    const worker = this.#worker;
    this.#worker = null;
    const message = e instanceof Error ? e.message.slice(0, 200) : "unknown";
    this.#options.log.warn(
      { err: message },
      "the Registry check thread failed: values are checked on the main thread",
    );
    this.#inline();
    void worker?.terminate();
  }

  /** Runs every unanswered check on this thread. */
  #inline(): void {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const { request, resolve, reject } of waiting) {
      try {
        resolve(checkValue(request.value, request.under));
      } catch (bug) {
        reject(bug);
      }
    }
  }
}
