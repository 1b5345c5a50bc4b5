// Keeps the state file close behind the published Snapshots without writing each one: schedule()
// keeps only the newest state; a write starts at most once per interval, and the newest state
// pending then is the one written: as a journal record of what changed since the write before,
// or as a new base when the journal grew long (ADR 79). Each state on disk is followed by its
// high-water mark.

import type { Clock } from "../clock.ts";
import type { MirrorInputs } from "../mirror/inputs.ts";
import type { Result } from "../result.ts";
import { changesBetween } from "./changes.ts";
import {
  type FileSystem,
  nodeFileSystem,
  removeStaleTemporaries,
  type WriteFileError,
} from "./file.ts";
import type { StateKey } from "./key.ts";
import { markOf, markPathOf, writeMarkFile } from "./mark.ts";
import type { OpenedStateFile } from "./read-state.ts";
import { encodeRecord } from "./record.ts";
import type { State } from "./state.ts";
import { appendRecord, writeStateFile } from "./write-state.ts";

export const DEFAULT_WRITE_INTERVAL_MS = 5_000;

/**
 * When the journal is folded into a new base: once its bytes reach `ratio` of the base's, but
 * not sooner than `minIntervalMs` after the last base; at once when the next record would take
 * them to the base's, or past `maxRecords` records. A start reads less than twice its base.
 */
export const COMPACTION = {
  ratio: 0.5,
  minIntervalMs: 60_000,
  maxRecords: 4_096,
} as const;

/** One completed write, for logs and metrics. */
export interface StateWritten {
  readonly bytes: number;
  /** From the start of the write to the file on disk, by the writer's clock. */
  readonly durationMs: number;
  /** The journal record this write appended (from 1); 0: it wrote a new base. */
  readonly record: number;
}

/** The file as this writer left it, or as the warm start read it. */
interface Journal {
  readonly baseIv: Buffer;
  readonly baseBytes: number;
  /** By the writer's clock. */
  readonly compactedAt: number;
  readonly records: number;
  readonly fileBytes: number;
  /** The inputs the file holds: what the next record is a change from. */
  readonly state: MirrorInputs;
}

export interface StateWriterOptions {
  readonly path: string;
  readonly key: StateKey;
  readonly clock: Clock;
  /** The least time between the starts of two writes; flush() does not wait for it. */
  readonly intervalMs?: number;
  /** A write that failed; the next schedule() or flush() tries again with the newest state. */
  readonly onError: (error: { readonly message: string }) => void;
  readonly onWritten?: (written: StateWritten) => void;
  readonly fileSystem?: FileSystem;
  /**
   * The file as a warm start read it: the next write appends to its journal, when the file is
   * still as read and was read whole (no torn or refused record), instead of writing a base.
   */
  readonly resume?: OpenedStateFile;
  /**
   * No write starts before this settles but one `flush` asks for: encoding 100k Secrets and a
   * Registry's check is 150 ms of the main thread's CPU, sliced (ADR 78), which a start must not
   * spend before it is ready (ADR 73).
   */
  readonly notBefore?: Promise<unknown>;
}

/**
 * Writes the newest scheduled state, at most once per interval. The first state is written at
 * once; the following ones when the interval since the last write's start has passed. Nothing
 * it does throws: failures go to onError.
 */
export class StateWriter {
  readonly #options: Omit<StateWriterOptions, "resume">;
  readonly #interval: number;
  readonly #fs: FileSystem;
  #pending: State | (() => State | null) | null = null;
  #inFlight: Promise<void> | null = null;
  #lastStart = Number.NEGATIVE_INFINITY;
  #cancelTimer: (() => void) | null = null;
  #closed = false;
  #cleaned = false;
  #held: boolean;
  #journal: Journal | null = null;

  constructor(options: StateWriterOptions) {
    // Not the resumed file: its state is let go once the file's inputs are confirmed or written.
    const { resume, ...kept } = options;
    this.#options = kept;
    this.#interval = options.intervalMs ?? DEFAULT_WRITE_INTERVAL_MS;
    this.#fs = options.fileSystem ?? nodeFileSystem;
    this.#held = options.notBefore !== undefined;
    if (resume !== undefined && !resume.journal.torn && resume.journal.stopped === null)
      this.#journal = {
        baseIv: resume.base.iv,
        baseBytes: resume.base.bytes,
        compactedAt: options.clock.now(),
        records: resume.journal.records,
        fileBytes: resume.base.bytes + resume.journal.bytes,
        state: resume.state,
      };
    const release = () => {
      this.#held = false;
      this.#arm();
    };
    options.notBefore?.then(release, release);
  }

  /**
   * The file holds `inputs` now (a warm start's file, confirmed by the watches): the next record
   * is a change from them, and the inputs read from the file are let go.
   */
  holds(inputs: MirrorInputs): void {
    if (this.#journal !== null) this.#journal = { ...this.#journal, state: inputs };
  }

  /**
   * Makes `state` the one to write next, replacing any pending one. It must not be mutated. A
   * function gives it when the write starts; null: nothing to write then (a later `schedule`
   * brings a state).
   */
  schedule(state: State | (() => State | null)): void {
    if (this.#closed) return;
    this.#pending = state;
    this.#arm();
  }

  /**
   * Writes the state pending now at once, without waiting for the interval, after any write in
   * flight; resolves when it is on disk or its failure was reported.
   */
  async flush(): Promise<void> {
    // The end of a write in flight may start the pending one itself, or arm its timer.
    if (this.#inFlight !== null) await this.#inFlight;
    if (this.#inFlight === null && this.#pending !== null) {
      this.#stopTimer();
      this.#start();
    }
    if (this.#inFlight !== null) await this.#inFlight;
  }

  /** Stops writing: drops the pending state and resolves once a write in flight ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#pending = null;
    this.#stopTimer();
    if (this.#inFlight !== null) await this.#inFlight;
  }

  #stopTimer(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = null;
  }

  #arm(): void {
    if (this.#closed || this.#held || this.#pending === null) return;
    if (this.#inFlight !== null || this.#cancelTimer !== null) return;
    const wait = this.#lastStart + this.#interval - this.#options.clock.now();
    if (wait <= 0) {
      this.#start();
      return;
    }
    this.#cancelTimer = this.#options.clock.setTimer(wait, () => {
      this.#cancelTimer = null;
      this.#arm();
    });
  }

  #start(): void {
    const pending = this.#pending;
    this.#pending = null;
    const state = typeof pending === "function" ? pending() : pending;
    if (state === null) return;
    this.#lastStart = this.#options.clock.now();
    this.#inFlight = this.#write(state).finally(() => {
      this.#inFlight = null;
      this.#arm();
    });
  }

  async #write(state: State): Promise<void> {
    const { path, key, clock } = this.#options;
    const started = clock.now();
    try {
      if (!this.#cleaned) {
        this.#cleaned = true;
        await removeStaleTemporaries(path, this.#fs);
        await removeStaleTemporaries(markPathOf(path), this.#fs);
      }
      const written = await this.#appendOrCompact(state, started);
      if (!written.ok) {
        this.#options.onError(written.error);
        return;
      }
      // After the state, never before: a pod that dies between the two leaves a state newer
      // than its mark, which a start takes for the newest, not for a replayed copy.
      const marked = await writeMarkFile(markPathOf(path), key, markOf(state), this.#fs);
      if (!marked.ok) this.#options.onError(marked.error);
      else this.#options.onWritten?.({ ...written.value, durationMs: clock.now() - started });
    } catch (e) {
      this.#journal = null;
      // A callback that threw, or a bug below: reported once, never out of the writer.
      try {
        this.#options.onError({
          message: `state file ${path}: ${e instanceof Error ? e.message : "write failed"}`,
        });
      } catch {
        // The reporting callback itself failed: nothing left to tell.
      }
    }
  }

  /**
   * Appends `state` to the journal as a record of its changes, or, when there is no journal of
   * this writer's or it is due, writes it as a new base. An append that fails is followed by a
   * base at once: the file may hold part of the record, which no later record may follow.
   */
  async #appendOrCompact(
    state: State,
    now: number,
  ): Promise<Result<{ readonly bytes: number; readonly record: number }, WriteFileError>> {
    const { path, key } = this.#options;
    const journal = this.#journal;
    this.#journal = null;
    if (journal !== null && !compactionDue(journal, now)) {
      const changes = await changesBetween(journal.state, state);
      const plaintext = await encodeRecord(changes, state);
      const index = journal.records + 1;
      const at = { baseIv: journal.baseIv, index, expectedSize: journal.fileBytes };
      // A change as large as what is left of the base's size (a Registry that narrowed every
      // Secret's keys) is a new base: cheaper to read, and the file stays under twice its base.
      const appended =
        journal.fileBytes + plaintext.length < 2 * journal.baseBytes
          ? await appendRecord(path, key, at, plaintext, this.#fs)
          : null;
      if (appended?.ok === true) {
        const { bytes } = appended.value;
        this.#journal = { ...journal, records: index, fileBytes: journal.fileBytes + bytes, state };
        return { ok: true, value: { bytes, record: index } };
      }
    }
    const base = await writeStateFile(path, key, state, this.#fs);
    if (!base.ok) return base;
    const { bytes, iv } = base.value;
    this.#journal = {
      baseIv: iv,
      baseBytes: bytes,
      compactedAt: now,
      records: 0,
      fileBytes: bytes,
      state,
    };
    return { ok: true, value: { bytes, record: 0 } };
  }
}

/** Whether the journal is to be folded into a new base now (COMPACTION). */
function compactionDue(journal: Journal, now: number): boolean {
  const journalBytes = journal.fileBytes - journal.baseBytes;
  if (journal.records >= COMPACTION.maxRecords) return true;
  return (
    journalBytes >= journal.baseBytes * COMPACTION.ratio &&
    now - journal.compactedAt >= COMPACTION.minIntervalMs
  );
}
