// The state keeper: the mirror's sink that keeps the state file (README, "The state file") close
// behind the published Snapshots, and writes it once more on shutdown.

import type { Clock } from "../clock.ts";
import type { MirrorInputs } from "../mirror/inputs.ts";
import { listArray } from "../mirror/listed-index.ts";
import type { Reflected, SnapshotSink } from "../mirror/sink.ts";
import type { Snapshot } from "../snapshot/types.ts";
import { sameKept } from "../state/changes.ts";
import { sameKeptCertificates } from "../state/kept-certificates.ts";
import { StateWriter } from "../state/writer.ts";
import type { OpenedState } from "./last-good-state.ts";

/** What becomes of the state kept on disk. */
export interface StateKeeperReports {
  written(durationMs: number, bytes: number): void;
  failed(message: string): void;
}

/** Keeps the state file current: the mirror's sink for it. */
export interface StateKeeper extends SnapshotSink {
  /** Writes the current inputs if they are whole (on shutdown), then stops. */
  close(): Promise<void>;
}

/** A quiet, healthy replica rewrites its state this often, so its age stays short. */
const REFRESH_MS = 5 * 60_000;

/**
 * Writes the inputs of each newly published Snapshot, at most once per the writer's interval,
 * and again, with the watches' newer positions, when the API server is heard from REFRESH_MS
 * after the last write; only whole inputs (a Snapshot whose inputs are not one whole is written
 * once they settle). Each state it hands the writer has one more write in its generation than
 * the one before. After a warm start, inputs the watches confirm unchanged are not written again.
 */
export function startStateKeeper(options: {
  readonly path: string;
  readonly opened: OpenedState;
  readonly clock: Clock;
  /** Milliseconds since the epoch, for `savedAt` and the generation's `heardAt`. */
  readonly wallClock: () => number;
  readonly reports: StateKeeperReports;
  /** No write but the one on close starts before this settles (StateWriterOptions.notBefore). */
  readonly notBefore?: Promise<unknown>;
}): StateKeeper {
  const { clock, opened, reports, wallClock } = options;
  // Of `opened`, only what later writes read: its warm inputs are dropped once compared.
  const { key, config } = opened;
  let { series, writes, heardAt: lastHeard } = opened.generation;
  const writer = new StateWriter({
    path: options.path,
    key,
    clock,
    onError: (e) => reports.failed(e.message),
    onWritten: (w) => reports.written(w.durationMs, w.bytes),
    ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
    ...(opened.file === undefined ? {} : { resume: opened.file }),
  });
  // What the newest Snapshot reflects, when its inputs are whole: read when a write starts, not
  // on every Snapshot (ADR 82). A capture hands the writer the store's list of App Secrets, which
  // the store's next change copies (100k pointers); capturing every Snapshot copied it on every
  // change, at 100k Apps 800 kB a rotation, and a full collection every few seconds.
  let latest: Reflected | null = null;
  let published: Snapshot | null = null;
  // A Snapshot was published whose inputs were not written yet.
  let changed = false;
  // After a warm start, the inputs its file holds, until the first whole inputs are compared with
  // them: when the watches confirm exactly what was loaded, the file already holds it, and
  // rewriting it (100 MiB at 100k Apps with 1 KiB credentials) would only cost the start CPU
  // and memory. Not after a rolled-back start: that file is older than the pod's mark, and the
  // next write puts it right.
  let loaded = opened.rolledBack === undefined ? (opened.warm?.inputs ?? null) : null;
  const stillLoaded = (): boolean => {
    if (loaded === null || latest === null) return false;
    const current = latest.inputs();
    const same = sameInputs(current, loaded);
    loaded = null;
    if (same) {
      changed = false;
      writer.holds(current);
    }
    return same;
  };
  let savedAt = clock.now();
  const save = (): void => {
    const reflected = latest;
    if (reflected === null) return;
    savedAt = clock.now();
    writes += 1;
    changed = false;
    const generation = { series, writes, heardAt: lastHeard };
    writer.schedule(() => {
      const inputs = reflected.current();
      // Not one whole now: a rebuild is on its way, and its Snapshot schedules again.
      if (inputs === null) return null;
      return { ...inputs, savedAt: wallClock(), generation, config };
    });
  };
  return {
    name: "state-file",
    publish(snapshot, reflected) {
      if (snapshot !== published) changed = true;
      published = snapshot;
      latest = reflected;
      if (changed && !stillLoaded()) save();
    },
    heard(reflected) {
      lastHeard = wallClock();
      latest = reflected;
      if ((changed && !stillLoaded()) || clock.now() - savedAt >= REFRESH_MS) save();
    },
    async close() {
      save();
      await writer.flush();
      await writer.close();
    },
  };
}

/**
 * Whether two whole inputs hold the same objects: the same Registry Secret and App Secrets at the
 * same resourceVersions (an object's content changes with its resourceVersion), in the same order
 * (a store seeded from a file keeps the file's). Another order counts as a change: one write more.
 * So does a check of the Registry made under other rules, or missing from one of them: a file
 * written before ADR 77 or under other options is rewritten once, with the check a start adopts;
 * and so does another Registry kept beside a refused value (ADR 91), or other certificates kept
 * beside refused ones (ADR 92).
 */
function sameInputs(a: MirrorInputs, b: MirrorInputs): boolean {
  if (checkOf(a) !== checkOf(b) || !sameKept(a.kept, b.kept)) return false;
  if (!sameKeptCertificates(a.certificates, b.certificates)) return false;
  const [ra, rb] = [a.registry, b.registry];
  if (ra.present !== rb.present) return false;
  if (ra.present && rb.present && ra.resourceVersion !== rb.resourceVersion) return false;
  if (a.secrets.length !== b.secrets.length) return false;
  const others = listArray(b.secrets);
  return listArray(a.secrets).every((s, i) => {
    const t = others[i]!;
    return (
      s.resourceVersion === t.resourceVersion && s.name === t.name && s.namespace === t.namespace
    );
  });
}

/** What a Registry's check was made from and under, as one string; null when there is none. */
function checkOf({ checked }: MirrorInputs): string | null {
  if (checked === undefined) return null;
  const { rules, defaultNamespace, allowLocalUpstreams, maxDecompressedBytes } = checked.under;
  const under = [rules, defaultNamespace, allowLocalUpstreams, maxDecompressedBytes];
  return JSON.stringify([checked.contentHash, ...under]);
}
