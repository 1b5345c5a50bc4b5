// Raw results of a run, one JSON file per suite under bench/results/, committed: the charts in
// docs/charts are rendered from these files (`npm run bench:charts`), never drawn by hand.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** What a suite saved: when, how (quick or full), the load around it, and its own data. */
export interface SuiteResult<T> {
  readonly suite: string;
  readonly at: string;
  readonly quick: boolean;
  readonly machine: string;
  readonly load: { readonly min: number; readonly max: number };
  readonly data: T;
}

/** Writes `bench/results/<suite>.json` (a quick run writes `<suite>.quick.json`). */
export function saveResult<T>(result: SuiteResult<T>): string {
  mkdirSync(DIR, { recursive: true });
  const path = `${DIR}${result.suite}${result.quick ? ".quick" : ""}.json`;
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** Reads a saved suite result; null when there is none. */
export function loadResult<T>(suite: string, quick = false): SuiteResult<T> | null {
  try {
    const text = readFileSync(`${DIR}${suite}${quick ? ".quick" : ""}.json`, "utf8");
    return JSON.parse(text) as SuiteResult<T>;
  } catch {
    return null;
  }
}
