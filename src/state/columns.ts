// The App Secrets in a state file's skeleton, in columns (ADR 66): each field of every Secret in
// one JSON string or one array of numbers, not one object per Secret. At 100k Secrets, checking
// 100k objects through zod took 0.8 s of a 1.9 s warm start; a few strings and number arrays are
// checked in milliseconds, as strictly.
//
//   namespaces        each namespace once, ascending, joined by SEPARATOR
//   secretCounts      how many Secrets each namespace has (at least one)
//   names             each Secret's name, ascending within its namespace, joined
//   resourceVersions  each Secret's resourceVersion, joined
//   keyCounts         how many keys each Secret has
//   keys              each Secret's keys in turn, joined
//   lengths           each key's value length, in the same order; UNKEPT_LENGTH for a value
//                     read for its presence only, which has no bytes (ADR 68)
//
// Sorted, so a Secret listed twice shows as two names out of order: no set of 100k names to build.

import * as z from "zod";
import type { AppSecret, AppSecretList } from "../mirror/inputs.ts";
import { listArray } from "../mirror/listed-index.ts";
import { err, ok, type Result } from "../result.ts";
import { UNKEPT_VALUE } from "../snapshot/types.ts";
import { SORT_SLICE, sortedInSlices } from "./sorted-in-slices.ts";

/** Between two entries of a column: no namespace, name, key or resourceVersion holds a space. */
export const SEPARATOR = " ";

/** Non-negative integers, checked in one loop: zod's per-element check took 20-60 ms at 200k. */
const counts = z.custom<readonly number[]>(
  (v) => Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && n >= 0),
  "expected an array of non-negative integers",
);

/** The length of a non-empty value whose bytes are not kept (UNKEPT_VALUE). */
const UNKEPT_LENGTH = -1;

/** Value lengths: non-negative integers, or UNKEPT_LENGTH. */
const valueLengths = z.custom<readonly number[]>(
  (v) => Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && n >= UNKEPT_LENGTH),
  "expected an array of value lengths",
);

/** What the skeleton holds of the App Secrets. No transforms: zod compiles it into one function. */
export const secretColumnsSchema = z.object({
  namespaces: z.string(),
  secretCounts: counts,
  names: z.string(),
  resourceVersions: z.string(),
  keyCounts: counts,
  keys: z.string(),
  lengths: valueLengths,
});

export type SecretColumns = z.infer<typeof secretColumnsSchema>;

type SecretKeyed = Pick<AppSecret, "namespace" | "name">;

/** The order a state file keeps App Secrets in: by namespace, then name. */
export const bySecret = (a: SecretKeyed, b: SecretKeyed): number =>
  a.namespace < b.namespace
    ? -1
    : a.namespace > b.namespace
      ? 1
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0;

/** A column's entry; throws on one a column cannot hold (a bug: the API server gives none). */
function entry(value: string, what: string): string {
  if (value === "" || value.includes(SEPARATOR))
    throw new TypeError(`a Secret's ${what} is empty or holds a space`);
  return value;
}

/**
 * The columns of `secrets`, sorted by namespace then name; `add` takes each value in column
 * order and says its length. Throws on an empty name or one holding SEPARATOR (a bug).
 */
export function toColumns(secrets: AppSecretList, add: (value: string) => number): SecretColumns {
  const columns = new ColumnsBuilder(add);
  // Already in order when the store was seeded from a file or listed: a sort of a sorted array
  // compares each neighbour once.
  for (const s of [...listArray(secrets)].sort(bySecret)) columns.push(s);
  return columns.columns();
}

/**
 * `toColumns`, giving the event loop a turn every SORT_SLICE Secrets, sort included: what a
 * state write does on the main thread (ADR 78).
 */
export async function toColumnsInSlices(
  secrets: AppSecretList,
  add: (value: string) => number,
): Promise<SecretColumns> {
  const columns = new ColumnsBuilder(add);
  const sorted = await sortedInSlices(listArray(secrets), bySecret);
  for (const [i, s] of sorted.entries()) {
    columns.push(s);
    if ((i + 1) % SORT_SLICE === 0) await new Promise(setImmediate);
  }
  return columns.columnsInTurns();
}

/** The columns of Secrets pushed in order. */
class ColumnsBuilder {
  readonly #add: (value: string) => number;
  readonly #namespaces: string[] = [];
  readonly #secretCounts: number[] = [];
  readonly #names: string[] = [];
  readonly #resourceVersions: string[] = [];
  readonly #keyCounts: number[] = [];
  readonly #keys: string[] = [];
  readonly #lengths: number[] = [];

  constructor(add: (value: string) => number) {
    this.#add = add;
  }

  push(s: AppSecret): void {
    if (this.#namespaces.at(-1) !== s.namespace) {
      this.#namespaces.push(entry(s.namespace, "namespace"));
      this.#secretCounts.push(0);
    }
    this.#secretCounts[this.#secretCounts.length - 1]! += 1;
    this.#names.push(entry(s.name, "name"));
    this.#resourceVersions.push(entry(s.resourceVersion, "resourceVersion"));
    const data = Object.entries(s.data);
    this.#keyCounts.push(data.length);
    for (const [key, value] of data) {
      this.#keys.push(entry(key, "key"));
      this.#lengths.push(value === UNKEPT_VALUE ? UNKEPT_LENGTH : this.#add(value));
    }
  }

  /** `columns()`, a turn of the event loop before each join: one of 100k names takes 5-10 ms. */
  async columnsInTurns(): Promise<SecretColumns> {
    const joined = async (entries: readonly string[]): Promise<string> => {
      await new Promise(setImmediate);
      return entries.join(SEPARATOR);
    };
    return {
      namespaces: await joined(this.#namespaces),
      secretCounts: this.#secretCounts,
      names: await joined(this.#names),
      resourceVersions: await joined(this.#resourceVersions),
      keyCounts: this.#keyCounts,
      keys: await joined(this.#keys),
      lengths: this.#lengths,
    };
  }

  columns(): SecretColumns {
    return {
      namespaces: this.#namespaces.join(SEPARATOR),
      secretCounts: this.#secretCounts,
      names: this.#names.join(SEPARATOR),
      resourceVersions: this.#resourceVersions.join(SEPARATOR),
      keyCounts: this.#keyCounts,
      keys: this.#keys.join(SEPARATOR),
      lengths: this.#lengths,
    };
  }
}

/** The `count` non-empty entries of a column, or null when it holds another number of them. */
export function split(column: string, count: number): string[] | null {
  if (count === 0) return column === "" ? [] : null;
  const entries = column.split(SEPARATOR);
  if (entries.length !== count) return null;
  for (const e of entries) if (e === "") return null;
  return entries;
}

const sum = (ns: readonly number[]): number => ns.reduce((a, b) => a + b, 0);

/**
 * The App Secrets the columns stand for, each value taken by `take` in column order; or where the
 * columns disagree (never a value).
 */
export function fromColumns(
  c: SecretColumns,
  take: (length: number) => string,
): Result<AppSecret[], string> {
  const namespaces = split(c.namespaces, c.secretCounts.length);
  if (namespaces === null) return err("its namespaces are not one per count");
  const total = sum(c.secretCounts);
  const names = split(c.names, total);
  const resourceVersions = split(c.resourceVersions, total);
  if (names === null || resourceVersions === null || c.keyCounts.length !== total)
    return err("its Secret columns are not one entry per Secret");
  const keyTotal = sum(c.keyCounts);
  const keys = split(c.keys, keyTotal);
  if (keys === null || c.lengths.length !== keyTotal)
    return err("its key columns are not one entry per key");
  const out: AppSecret[] = [];
  let s = 0;
  let k = 0;
  for (const [n, namespace] of namespaces.entries()) {
    if (n > 0 && !(namespaces[n - 1]! < namespace))
      return err(`its namespaces repeat or are out of order, at namespace ${n}`);
    if (c.secretCounts[n] === 0) return err(`its namespace ${n} has no Secret`);
    const first = s;
    for (const end = s + c.secretCounts[n]!; s < end; s++) {
      const name = names[s]!;
      if (s > first && !(names[s - 1]! < name))
        return err(`it lists one Secret twice or out of order, at secrets.${s}`);
      const data: Record<string, string> = {};
      for (const end = k + c.keyCounts[s]!; k < end; k++) {
        const key = keys[k]!;
        const length = c.lengths[k]!;
        const value = length === UNKEPT_LENGTH ? UNKEPT_VALUE : take(length);
        if (Object.hasOwn(data, key)) return err(`it repeats a key of the Secret at secrets.${s}`);
        // Defined, not assigned: a key named `__proto__` stays a key.
        if (key === "__proto__")
          Object.defineProperty(data, key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else data[key] = value;
      }
      out.push({ namespace, name, resourceVersion: resourceVersions[s]!, data });
    }
  }
  return ok(out);
}
