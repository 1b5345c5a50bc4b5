// The sidecar's last-good state on disk (README, "The state file"): read once at start for a warm
// start (here); kept close behind the served Snapshots afterwards, and written once more on
// shutdown, by the state keeper (state-keeper.ts).

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { RegistrySecret, WarmStart } from "../mirror/inputs.ts";
import type { RolledBack } from "../ops/rolled-back-log.ts";
import { continueFrom, standing } from "../state/generation.ts";
import { readKeyFile, type StateKey } from "../state/key.ts";
import { markPathOf, readMarkFile } from "../state/mark.ts";
import { type OpenedStateFile, readStateWithJournal } from "../state/read-state.ts";
import { type Generation, type StateConfig, stateConfig } from "../state/state.ts";
import type { SidecarConfig } from "./config.ts";

/** How a start went with the state file: the metric label of `replica_mirror_state_loads_total`. */
export type StateLoad = "loaded" | "rolled-back" | "off" | "no-key" | string;

/** What the state file gives a starting sidecar. */
export interface OpenedState {
  readonly key: StateKey;
  readonly config: StateConfig;
  /** The inputs to serve at once, when the file held usable ones. */
  readonly warm: WarmStart | undefined;
  /** The generation of this pod's last write: the next write follows it. */
  readonly generation: Generation;
  /** Set when the served state is not the newest this pod wrote: how, its Registry, the newest. */
  readonly rolledBack: RolledBack | undefined;
  /** The file as read, when the pod's writes go on appending to it (ADR 79): the newest. */
  readonly file?: OpenedStateFile;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const versionOf = (r: RegistrySecret): string | null => (r.present ? r.resourceVersion : null);
const randomSeries = (): string => randomBytes(8).toString("hex");

/**
 * The key and what the state file holds, or null when the feature is off (no `--state-file` or
 * no `--state-key-file`) or the key cannot be read. Never fails the start: a file that cannot be
 * used is one log line, and the sidecar starts cold. A file older than the newest this pod wrote
 * (by the high-water mark beside it) is served, with one warning line.
 */
export async function openLastGoodState(
  config: SidecarConfig,
  log: Logger,
  now: number,
  counted: (load: StateLoad) => void,
  newSeries: () => string = randomSeries,
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
  const [read, mark] = await Promise.all([
    readStateWithJournal({
      path: stateFile,
      key: key.value,
      maxAgeMs: config.stateMaxAgeSeconds * 1000,
      now,
      config: expected,
    }),
    readMarkFile(markPathOf(stateFile), key.value),
  ]);
  if (!mark.ok && mark.error.kind !== "missing")
    log.warn(
      { reason: mark.error.kind, err: mark.error.message },
      "state file's high-water mark not used: a replayed state file cannot be told",
    );
  const newest = mark.ok ? mark.value : null;
  const opened = { key: key.value, config: expected };
  if (!read.ok) {
    const level = read.error.kind === "missing" ? "info" : "warn";
    log[level](
      { reason: read.error.kind, err: read.error.message },
      "state file not used: starting cold",
    );
    counted(read.error.kind);
    const generation = continueFrom(null, newest, newSeries);
    return { ...opened, warm: undefined, generation, rolledBack: undefined };
  }
  const { state, journal } = read.value;
  const { savedAt, generation, ...inputs } = state;
  const warm = { inputs, savedAt };
  const fields = {
    secrets: inputs.secrets.length,
    savedAt: iso(savedAt),
    writes: generation.writes,
    ...(journal.records > 0 ? { records: journal.records } : {}),
  };
  // A record that does not open ends the replay there: the state before it is one this pod
  // wrote, and the mark tells whether newer ones were (ADR 79).
  if (journal.stopped !== null)
    log.warn(
      { reason: journal.stopped.kind, err: journal.stopped.message, records: journal.records },
      "state file's journal stops at a record that does not open: serving the records before it",
    );
  else if (journal.torn)
    log.info(
      { records: journal.records },
      "state file's last journal record is cut short (a write the container did not finish): ignored",
    );
  const next = continueFrom(generation, newest, newSeries);
  const stands = standing(generation, newest);
  if (stands.kind === "unknown" || stands.kind === "newest") {
    log.info(fields, "state file loaded: serving its Snapshot until the watches confirm it");
    counted("loaded");
    return { ...opened, warm, generation: next, rolledBack: undefined, file: read.value };
  }
  // Served all the same: while the API server is away, a stale Snapshot routes where none would
  // (ADR 50); the watches replace it once they answer.
  const registry = versionOf(inputs.registry);
  log.warn(
    {
      ...fields,
      reason: stands.kind,
      registry,
      newestWrites: stands.newest.writes,
      newestSavedAt: iso(stands.newest.savedAt),
      newestRegistry: stands.newest.registry,
    },
    "state file is not the newest this pod wrote: serving it until the watches confirm it",
  );
  counted("rolled-back");
  const rolledBack = { reason: stands.kind, registry, newest: stands.newest };
  return { ...opened, warm, generation: next, rolledBack };
}
