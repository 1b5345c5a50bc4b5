// The checked Registry in a state file's skeleton (ADR 77), and the Registry kept beside a
// refused value (ADR 91: `beside` for `contentHash`, no `refused`), in columns as the App
// Secrets are (ADR 66): a few joined strings and arrays of numbers, not one object per App.
//
//   under             the rules and options it was checked under (registry/rules.ts)
//   contentHash       the contentHash of the Registry value it was checked from
//   strings           each namespace, key, upstream and credential prefix once
//   names             each App's name, joined by SEPARATOR
//   hostnameCounts    how many hostnames each App has (at least one)
//                     (this and each column of numbers below: one number when all Apps share it)
//   hostnames         each App's hostnames in turn, in normal form, joined
//   secretNamespaces  each App's secretRef.namespace: its index in `strings`
//   secretNames       each App's secretRef.name, joined
//   secretKeys        each App's secretRef.key: its index in `strings`
//   upstreams         each App's upstream: an index in `strings`, or NONE
//   prefixes          each App's credential.prefix: an index in `strings`, or NONE (no credential)
//   tlsNamespaces     each App's tls.secretRef.namespace: an index in `strings`, or NONE (no tls)
//   tlsNames          the tls.secretRef.name of each App that has one, joined
//   refused           the refused App entries, as the check reported them
//
// A string the rules allow a space in (an upstream, a prefix) is only ever in `strings`, a JSON
// array. Checked on reading as strictly as the rest of the skeleton: the columns must agree with
// each other entry for entry, or the file is malformed.

import * as z from "zod";
import type { CheckedRegistry, KeptRegistry } from "../mirror/inputs.ts";
import type { RefusedApp } from "../registry/parse.ts";
import type { AppSpec, Registry } from "../registry/schema.ts";
import { err, ok, type Result } from "../result.ts";
import { SEPARATOR, split } from "./columns.ts";

/** The index of a field an App does not have. */
const NONE = -1;

const isIndex = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= NONE;

/**
 * A number per App (an index into `strings`, NONE or a count), or one number for all of them:
 * a column every App has the same entry in (the same key, no TLS) costs a few bytes, not 100k
 * numbers to write and read. Checked in one loop (zod's per-element check is slow).
 */
const indices = z.custom<number | readonly number[]>(
  (v) => isIndex(v) || (Array.isArray(v) && v.every(isIndex)),
  "expected an index or an array of indices",
);

/** Entry `i` of an index column. */
const at = (column: number | readonly number[], i: number): number =>
  typeof column === "number" ? column : column[i]!;

/** One number when every entry is that number (and there is at least one), else the entries. */
const compact = (column: number[]): number | number[] =>
  column.length > 0 && column.every((n) => n === column[0]) ? column[0]! : column;

const underSchema = z.object({
  rules: z.number().int().positive(),
  defaultNamespace: z.string().min(1),
  allowLocalUpstreams: z.boolean(),
  maxDecompressedBytes: z.number().int().positive(),
});

/** The columns of Apps, in a check's columns and a kept Registry's alike. */
const appColumnsShape = {
  strings: z.array(z.string()),
  names: z.string(),
  hostnameCounts: indices,
  hostnames: z.string(),
  secretNamespaces: indices,
  secretNames: z.string(),
  secretKeys: indices,
  upstreams: indices,
  prefixes: indices,
  tlsNamespaces: indices,
  tlsNames: z.string(),
};

/** No transforms: zod compiles it into one function. */
export const registryColumnsSchema = z.object({
  under: underSchema,
  contentHash: z.string().regex(/^[0-9a-f]{16}$/),
  ...appColumnsShape,
  refused: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      name: z.string().nullable(),
      reason: z.string(),
    }),
  ),
});

export type RegistryColumns = z.infer<typeof registryColumnsSchema>;

/** The Registry kept beside a refused value (ADR 91): its Apps, the rules and the value's version. */
export const keptColumnsSchema = z.object({
  under: underSchema,
  beside: z.string().min(1),
  ...appColumnsShape,
});

export type KeptColumns = z.infer<typeof keptColumnsSchema>;

type AppColumns = Omit<RegistryColumns, "under" | "contentHash" | "refused">;

/** A joined column's entry; throws on one it cannot hold (a bug: the rules allow none). */
function entry(value: string, what: string): string {
  if (value === "" || value.includes(SEPARATOR))
    throw new TypeError(`a checked App's ${what} is empty or holds a space`);
  return value;
}

/** The columns of a checked Registry. Throws on a name a column cannot hold (a bug). */
export function toRegistryColumns(checked: CheckedRegistry): RegistryColumns {
  return checkColumns(checked, appColumns(checked.registry));
}

/** Apps put in columns between two turns of the event loop (ADR 78). */
const SLICE = 2_048;

/** `toRegistryColumns`, SLICE Apps a turn: 100k Apps in one call held the main thread 40 ms. */
export async function toRegistryColumnsInSlices(
  checked: CheckedRegistry,
): Promise<RegistryColumns> {
  return checkColumns(checked, await appColumnsInSlices(checked.registry));
}

/** The columns of a kept Registry, SLICE Apps a turn. Throws as `toRegistryColumns` does. */
export async function toKeptColumnsInSlices(kept: KeptRegistry): Promise<KeptColumns> {
  const apps = await appColumnsInSlices(kept.registry);
  return { under: { ...kept.under }, beside: kept.beside, ...apps };
}

/** `toKeptColumnsInSlices` in one call. */
export function toKeptColumns(kept: KeptRegistry): KeptColumns {
  return { under: { ...kept.under }, beside: kept.beside, ...appColumns(kept.registry) };
}

function checkColumns(checked: CheckedRegistry, apps: AppColumns): RegistryColumns {
  const refused = checked.refused.map((r) => ({ ...r }));
  return { under: { ...checked.under }, contentHash: checked.contentHash, ...apps, refused };
}

function appColumns(registry: Registry): AppColumns {
  const columns = new ColumnsBuilder();
  for (const app of registry.apps) columns.push(app);
  return columns.columns();
}

async function appColumnsInSlices(registry: Registry): Promise<AppColumns> {
  const columns = new ColumnsBuilder();
  for (const [i, app] of registry.apps.entries()) {
    columns.push(app);
    if ((i + 1) % SLICE === 0) await new Promise(setImmediate);
  }
  return columns.columns();
}

/** The columns of Apps pushed in order. */
class ColumnsBuilder {
  readonly #strings: string[] = [];
  readonly #at = new Map<string, number>();
  readonly #names: string[] = [];
  readonly #hostnames: string[] = [];
  readonly #secretNames: string[] = [];
  readonly #tlsNames: string[] = [];
  readonly #hostnameCounts: number[] = [];
  readonly #secretNamespaces: number[] = [];
  readonly #secretKeys: number[] = [];
  readonly #upstreams: number[] = [];
  readonly #prefixes: number[] = [];
  readonly #tlsNamespaces: number[] = [];

  #index(value: string): number {
    let i = this.#at.get(value);
    if (i === undefined) {
      i = this.#strings.push(value) - 1;
      this.#at.set(value, i);
    }
    return i;
  }

  push(app: AppSpec): void {
    this.#names.push(entry(app.name, "name"));
    this.#hostnameCounts.push(app.hostnames.length);
    for (const h of app.hostnames) this.#hostnames.push(entry(h, "hostname"));
    this.#secretNamespaces.push(this.#index(app.secretRef.namespace));
    this.#secretNames.push(entry(app.secretRef.name, "Secret name"));
    this.#secretKeys.push(this.#index(app.secretRef.key));
    this.#upstreams.push(app.upstream === null ? NONE : this.#index(app.upstream));
    this.#prefixes.push(app.credential === null ? NONE : this.#index(app.credential.prefix));
    this.#tlsNamespaces.push(app.tls === null ? NONE : this.#index(app.tls.secretRef.namespace));
    if (app.tls !== null) this.#tlsNames.push(entry(app.tls.secretRef.name, "TLS Secret name"));
  }

  columns(): AppColumns {
    return {
      strings: this.#strings,
      names: this.#names.join(SEPARATOR),
      hostnameCounts: compact(this.#hostnameCounts),
      hostnames: this.#hostnames.join(SEPARATOR),
      secretNamespaces: compact(this.#secretNamespaces),
      secretNames: this.#secretNames.join(SEPARATOR),
      secretKeys: compact(this.#secretKeys),
      upstreams: compact(this.#upstreams),
      prefixes: compact(this.#prefixes),
      tlsNamespaces: compact(this.#tlsNamespaces),
      tlsNames: this.#tlsNames.join(SEPARATOR),
    };
  }
}

/**
 * The checked Registry the columns stand for, its objects frozen as the check freezes them; or
 * where the columns disagree.
 */
export function fromRegistryColumns(c: RegistryColumns): Result<CheckedRegistry, string> {
  const registry = appsFromColumns(c);
  if (!registry.ok) return registry;
  const refused: RefusedApp[] = c.refused.map((r) => ({ ...r }));
  return ok({
    under: { ...c.under },
    contentHash: c.contentHash,
    registry: registry.value,
    refused,
  });
}

/** The kept Registry the columns stand for; or where they disagree. */
export function fromKeptColumns(c: KeptColumns): Result<KeptRegistry, string> {
  const registry = appsFromColumns(c);
  if (!registry.ok) return registry;
  return ok({ under: { ...c.under }, beside: c.beside, registry: registry.value });
}

/** The Apps of the columns, frozen as the check freezes them; or where the columns disagree. */
function appsFromColumns(c: AppColumns): Result<Registry, string> {
  const names = c.names === "" ? [] : c.names.split(SEPARATOR);
  const n = names.length;
  const secretNames = split(c.secretNames, n);
  if (names.includes("") || secretNames === null) return err("its App columns are not one per App");
  const { hostnameCounts, secretNamespaces, secretKeys, upstreams, prefixes, tlsNamespaces } = c;
  for (const column of [
    hostnameCounts,
    secretNamespaces,
    secretKeys,
    upstreams,
    prefixes,
    tlsNamespaces,
  ])
    if (typeof column !== "number" && column.length !== n)
      return err("its App columns are not one per App");
  let hostnameTotal = 0;
  let tlsTotal = 0;
  for (let i = 0; i < n; i++) {
    const count = at(hostnameCounts, i);
    if (count <= 0) return err(`its App ${i} has no hostname`);
    hostnameTotal += count;
    if (at(tlsNamespaces, i) !== NONE) tlsTotal++;
  }
  const hostnames = split(c.hostnames, hostnameTotal);
  const tlsNames = split(c.tlsNames, tlsTotal);
  if (hostnames === null || tlsNames === null)
    return err("its hostname or TLS columns disagree with their counts");
  const { strings } = c;
  const string = (i: number): string | undefined => (i === NONE ? undefined : strings[i]);
  const apps: AppSpec[] = [];
  let h = 0;
  let t = 0;
  for (let i = 0; i < n; i++) {
    const namespace = strings[at(secretNamespaces, i)];
    const key = strings[at(secretKeys, i)];
    const upstream = string(at(upstreams, i));
    const prefix = string(at(prefixes, i));
    const tlsNamespace = string(at(tlsNamespaces, i));
    if (
      namespace === undefined ||
      key === undefined ||
      (upstream === undefined && at(upstreams, i) !== NONE) ||
      (prefix === undefined && at(prefixes, i) !== NONE) ||
      (tlsNamespace === undefined && at(tlsNamespaces, i) !== NONE)
    )
      return err(`its App ${i} names a string it does not hold`);
    const end = h + at(hostnameCounts, i);
    apps.push(
      Object.freeze({
        name: names[i]!,
        hostnames: Object.freeze(hostnames.slice(h, end)),
        secretRef: Object.freeze({ namespace, name: secretNames[i]!, key }),
        upstream: upstream ?? null,
        credential: prefix === undefined ? null : Object.freeze({ prefix }),
        tls:
          tlsNamespace === undefined
            ? null
            : Object.freeze({
                secretRef: Object.freeze({ namespace: tlsNamespace, name: tlsNames[t++]! }),
              }),
      }),
    );
    h = end;
  }
  return ok(Object.freeze({ apps: Object.freeze(apps) }));
}
