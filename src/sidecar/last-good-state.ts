// The sidecar's last-good state on disk (README, "The state file"): read once at start for a warm
// start, kept close behind the served Snapshots afterwards, written once more on shutdown.

import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { MirrorInputs, WarmStart } from "../mirror/inputs.ts";
import { readKeyFile, type StateKey } from "../state/key.ts";
import { readStateFile } from "../state/read-state.ts";
import { type StateConfig, stateConfig } from "../state/state.ts";
import { StateWriter } from "../state/writer.ts";
import type { SidecarConfig } from "./config.ts";

/** How a start went with the state file: the metric label of `replica_mirror_state_loads_total`. */
export type StateLoad = "loaded" | "off" | "no-key" | string;

/** What the state file gives a starting sidecar. */
export interface OpenedState {
  readonly key: StateKey;
  readonly config: StateConfig;
  /** The inputs to serve at once, when the file held usable ones. */
  readonly warm: WarmStart | undefined;
}

/**
 * The key and what the state file holds, or null when the feature is off (no `--state-file` or
 * no `--state-key-file`) or the key cannot be read. Never fails the start: a file that cannot be
 * used is one log line, and the sidecar starts cold.
 */
export async function openLastGoodState(
  config: SidecarConfig,
  log: Logger,
  now: number,
  counted: (load: StateLoad) => void,
): Promise<OpenedState | null> {
  const { stateFile, stateKeyFile } = config;
  if (stateFile === undefined) {
    counted("off");
    return null;
  }
  if (stateKeyFile === undefined) {
    log.warn({ stateFile }, "state file off: --state-key-file is not set, nothing is kept on disk");
    counted("off");
    return null;
  }
  const key = await readKeyFile(stateKeyFile);
  if (!key.ok) {
    // The key Secret is optional in the manifests: none is a choice, a bad one a mistake.
    if (key.error.missing === true)
      log.info({ stateKeyFile }, "state file off: no key (the key Secret is not there)");
    else
      log.error({ stateKeyFile, err: key.error.message }, "state file off: the key cannot be used");
    counted("no-key");
    return null;
  }
  const expected = stateConfig(config);
  const read = await readStateFile({
    path: stateFile,
    key: key.value,
    maxAgeMs: config.stateMaxAgeSeconds * 1000,
    now,
    config: expected,
  });
  if (!read.ok) {
    const level = read.error.kind === "missing" ? "info" : "warn";
    log[level](
      { reason: read.error.kind, err: read.error.message },
      "state file not used: starting cold",
    );
    counted(read.error.kind);
    return { key: key.value, config: expected, warm: undefined };
  }
  const { savedAt, ...inputs } = read.value;
  log.info(
    { secrets: inputs.secrets.length, savedAt: new Date(savedAt).toISOString() },
    "state file loaded: serving its Snapshot until the watches confirm it",
  );
  counted("loaded");
  return { key: key.value, config: expected, warm: { inputs, savedAt } };
}

/** What becomes of the state kept on disk. */
export interface StateKeeperReports {
  written(durationMs: number, bytes: number): void;
  failed(message: string): void;
}

/** Keeps the state file current; the owner says when something changed. */
export interface StateKeeper {
  /** A Snapshot was published: the inputs changed. */
  published(): void;
  /** The API server was heard from: the inputs are still current. */
  contact(): void;
  /** Writes the current inputs if they are whole (on shutdown), then stops. */
  close(): Promise<void>;
}

/** How often the keeper looks for something to write. */
const CHECK_MS = 1_000;
/** A quiet, healthy replica rewrites its state this often, so its age stays short. */
const REFRESH_MS = 5 * 60_000;

/**
 * Writes the mirror's inputs after each change, at most once per the writer's interval, and
 * again every REFRESH_MS while the API server keeps being heard from; only whole inputs
 * (`capture` is null while a change is under way, and the next check tries again).
 */
export function startStateKeeper(options: {
  readonly path: string;
  readonly opened: OpenedState;
  readonly capture: () => MirrorInputs | null;
  readonly clock: Clock;
  /** Milliseconds since the epoch, for `savedAt`. */
  readonly wallClock: () => number;
  readonly reports: StateKeeperReports;
}): StateKeeper {
  const { clock, opened, reports } = options;
  const writer = new StateWriter({
    path: options.path,
    key: opened.key,
    clock,
    onError: (e) => reports.failed(e.message),
    onWritten: (w) => reports.written(w.durationMs, w.bytes),
  });
  let changed = false;
  let heardAt = Number.NEGATIVE_INFINITY;
  let savedAt = Number.NEGATIVE_INFINITY;
  const save = (): boolean => {
    const inputs = options.capture();
    if (inputs === null) return false;
    savedAt = clock.now();
    writer.schedule({ ...inputs, savedAt: options.wallClock(), config: opened.config });
    return true;
  };
  let cancel = (): void => {};
  const check = (): void => {
    const stale = heardAt > savedAt && clock.now() - savedAt >= REFRESH_MS;
    if ((changed || stale) && save()) changed = false;
    cancel = clock.setTimer(CHECK_MS, check);
  };
  cancel = clock.setTimer(CHECK_MS, check);
  return {
    published() {
      changed = true;
    },
    contact() {
      heardAt = clock.now();
    },
    async close() {
      cancel();
      save();
      await writer.flush();
      await writer.close();
    },
  };
}
