// The journal (ADR 79): records appended to the state file after its base, each sealed as the
// base is (seal.ts) under its own magic, and bound to the base's IV and its index from 1, so a
// record cannot be dropped from the middle, moved, or spliced after another base unseen. The
// base with the records that open, replayed in order, is the state the file holds.

import type { AppSecret } from "../mirror/inputs.ts";
import type { SecretKey } from "./changes.ts";
import { bySecret } from "./columns.ts";
import { type StateError, stateError } from "./errors.ts";
import type { StateKey } from "./key.ts";
import { decodeRecord, type JournalRecord } from "./record.ts";
import { IV_BYTES, RECORD_MAGIC, seal, sealedLength, unseal } from "./seal.ts";
import type { State, StateConfig } from "./state.ts";

/** What a record's tag authenticates besides its header: the base it follows, and its place. */
export function recordBound(baseIv: Uint8Array, index: number): Buffer {
  if (baseIv.length !== IV_BYTES) throw new RangeError(`a base's IV is ${IV_BYTES} bytes`);
  const bound = Buffer.alloc(IV_BYTES + 4);
  bound.set(baseIv, 0);
  bound.writeUInt32BE(index, IV_BYTES);
  return bound;
}

/** The sealed record `index` (from 1) of the base whose IV is `baseIv`. */
export const sealRecord = (
  plaintext: Uint8Array,
  key: StateKey,
  baseIv: Uint8Array,
  index: number,
): Buffer => seal(plaintext, key, undefined, RECORD_MAGIC, recordBound(baseIv, index));

/** How reading a journal went. */
export interface JournalRead {
  /** Records replayed. */
  readonly records: number;
  /** Their sealed bytes. */
  readonly bytes: number;
  /** The file ended inside a record: an append the writer did not finish, ignored. */
  readonly torn: boolean;
  /** A whole record that did not open: the records before it are replayed, none after. */
  readonly stopped: StateError | null;
}

/**
 * The records of the file `bytes` from `at` (where its base ends), opened and decoded, up to the
 * end, a torn last record, or the first that fails. Decrypts in place, as `unseal`.
 */
export function readJournal(
  bytes: Buffer,
  at: number,
  key: StateKey,
  baseIv: Uint8Array,
  config: StateConfig,
): { readonly records: JournalRecord[]; readonly read: JournalRead } {
  const records: JournalRecord[] = [];
  const start = at;
  const done = (torn: boolean, stopped: StateError | null) => ({
    records,
    read: { records: records.length, bytes: at - start, torn, stopped },
  });
  while (at < bytes.length) {
    const index = records.length + 1;
    const rest = bytes.subarray(at);
    const magic = rest.subarray(0, RECORD_MAGIC.length);
    if (!magic.equals(RECORD_MAGIC.subarray(0, magic.length)))
      return done(false, stateError("corrupt", `record ${index} has no record's magic bytes`));
    const length = sealedLength(rest);
    if (length === null || length > rest.length) return done(true, null);
    const plaintext = unseal(
      rest.subarray(0, length),
      key,
      RECORD_MAGIC,
      recordBound(baseIv, index),
    );
    if (!plaintext.ok)
      return done(false, {
        ...plaintext.error,
        message: `record ${index} ${plaintext.error.message}`,
      });
    const record = decodeRecord(plaintext.value, config);
    if (!record.ok)
      return done(false, { ...record.error, message: `record ${index} ${record.error.message}` });
    records.push(record.value);
    at += length;
  }
  return done(false, null);
}

interface Change {
  readonly key: SecretKey;
  readonly secret: AppSecret | null;
}

const keyOf = (s: SecretKey): string => `${s.namespace}/${s.name}`;

/**
 * The state `records` take `base` to, its App Secrets in the base's order (by namespace, then
 * name): the changes of all records are gathered by key, the last one winning, then merged
 * into the base's sorted Secrets in one pass.
 */
export function replay(base: State, records: readonly JournalRecord[]): State {
  const last = records.at(-1);
  if (last === undefined) return base;
  const changes = new Map<string, Change>();
  let { registry, checked, kept, certificates } = base;
  for (const r of records) {
    for (const key of r.removed) changes.set(keyOf(key), { key, secret: null });
    for (const s of r.set) changes.set(keyOf(s), { key: s, secret: s });
    if (r.registry !== undefined) registry = r.registry;
    if (r.checked !== undefined) checked = r.checked ?? undefined;
    if (r.kept !== undefined) kept = r.kept ?? undefined;
    if (r.certificates !== undefined) certificates = r.certificates ?? undefined;
  }
  const sorted = [...changes.values()].sort((a, b) => bySecret(a.key, b.key));
  const secrets: AppSecret[] = [];
  let j = 0;
  for (const s of base.secrets) {
    while (j < sorted.length && bySecret(sorted[j]!.key, s) < 0) {
      const added = sorted[j++]!.secret;
      if (added !== null) secrets.push(added);
    }
    if (j < sorted.length && bySecret(sorted[j]!.key, s) === 0) {
      const changed = sorted[j++]!.secret;
      if (changed !== null) secrets.push(changed);
    } else secrets.push(s);
  }
  for (; j < sorted.length; j++) {
    const added = sorted[j]!.secret;
    if (added !== null) secrets.push(added);
  }
  const { savedAt, generation, watches } = last;
  const { checked: _, kept: __, certificates: ___, ...rest } = base;
  return {
    ...rest,
    savedAt,
    generation,
    watches,
    registry,
    secrets,
    ...(checked === undefined ? {} : { checked }),
    ...(kept === undefined ? {} : { kept }),
    ...(certificates === undefined ? {} : { certificates }),
  };
}
