// The checked Registry in a state file's skeleton (ADR 77), in columns as the App Secrets are
// (ADR 66): a few joined strings and arrays of numbers, not one object per App.
//
//   under             the rules and options it was checked under (registry/rules.ts)
//   contentHash       the contentHash of the Registry value it was checked from
//   strings           each namespace, key, upstream and credential prefix once
//   names             each App's name, joined by SEPARATOR
//   hostnameCounts    how many hostnames each App has (at least one)
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
import type { CheckedRegistry } from "../mirror/inputs.ts";
import type { RefusedApp } from "../registry/parse.ts";
import type { AppSpec, Registry } from "../registry/schema.ts";
import { err, ok, type Result } from "../result.ts";
import { SEPARATOR } from "./columns.ts";

/** The index of a field an App does not have. */
const NONE = -1;

/** Indices into `strings`, or NONE; checked in one loop (zod's per-element check is slow). */
const indices = z.custom<readonly number[]>(
  (v) => Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && n >= NONE),
  "expected an array of indices",
);

/** No transforms: zod compiles it into one function. */
export const registryColumnsSchema = z.object({
  under: z.object({
    rules: z.number().int().positive(),
    defaultNamespace: z.string().min(1),
    allowLocalUpstreams: z.boolean(),
    maxDecompressedBytes: z.number().int().positive(),
  }),
  contentHash: z.string().regex(/^[0-9a-f]{16}$/),
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
  refused: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      name: z.string().nullable(),
      reason: z.string(),
    }),
  ),
});

export type RegistryColumns = z.infer<typeof registryColumnsSchema>;

/** A joined column's entry; throws on one it cannot hold (a bug: the rules allow none). */
function entry(value: string, what: string): string {
  if (value === "" || value.includes(SEPARATOR))
    throw new TypeError(`a checked App's ${what} is empty or holds a space`);
  return value;
}

/** The columns of a checked Registry. Throws on a name a column cannot hold (a bug). */
export function toRegistryColumns(checked: CheckedRegistry): RegistryColumns {
  const strings: string[] = [];
  const at = new Map<string, number>();
  const index = (value: string): number => {
    let i = at.get(value);
    if (i === undefined) {
      i = strings.push(value) - 1;
      at.set(value, i);
    }
    return i;
  };
  const { apps } = checked.registry;
  const names: string[] = [];
  const hostnames: string[] = [];
  const secretNames: string[] = [];
  const tlsNames: string[] = [];
  const hostnameCounts: number[] = [];
  const secretNamespaces: number[] = [];
  const secretKeys: number[] = [];
  const upstreams: number[] = [];
  const prefixes: number[] = [];
  const tlsNamespaces: number[] = [];
  for (const app of apps) {
    names.push(entry(app.name, "name"));
    hostnameCounts.push(app.hostnames.length);
    for (const h of app.hostnames) hostnames.push(entry(h, "hostname"));
    secretNamespaces.push(index(app.secretRef.namespace));
    secretNames.push(entry(app.secretRef.name, "Secret name"));
    secretKeys.push(index(app.secretRef.key));
    upstreams.push(app.upstream === null ? NONE : index(app.upstream));
    prefixes.push(app.credential === null ? NONE : index(app.credential.prefix));
    tlsNamespaces.push(app.tls === null ? NONE : index(app.tls.secretRef.namespace));
    if (app.tls !== null) tlsNames.push(entry(app.tls.secretRef.name, "TLS Secret name"));
  }
  return {
    under: { ...checked.under },
    contentHash: checked.contentHash,
    strings,
    names: names.join(SEPARATOR),
    hostnameCounts,
    hostnames: hostnames.join(SEPARATOR),
    secretNamespaces,
    secretNames: secretNames.join(SEPARATOR),
    secretKeys,
    upstreams,
    prefixes,
    tlsNamespaces,
    tlsNames: tlsNames.join(SEPARATOR),
    refused: checked.refused.map((r) => ({ ...r })),
  };
}

/** The `count` non-empty entries of a joined column, or null when it holds another number. */
function split(column: string, count: number): string[] | null {
  if (count === 0) return column === "" ? [] : null;
  const entries = column.split(SEPARATOR);
  if (entries.length !== count) return null;
  for (const e of entries) if (e === "") return null;
  return entries;
}

/**
 * The checked Registry the columns stand for, its objects frozen as the check freezes them; or
 * where the columns disagree.
 */
export function fromRegistryColumns(c: RegistryColumns): Result<CheckedRegistry, string> {
  const n = c.hostnameCounts.length;
  const names = split(c.names, n);
  const secretNames = split(c.secretNames, n);
  if (names === null || secretNames === null) return err("its App columns are not one per App");
  for (const column of [c.secretNamespaces, c.secretKeys, c.upstreams, c.prefixes, c.tlsNamespaces])
    if (column.length !== n) return err("its App columns are not one per App");
  let hostnameTotal = 0;
  let tlsTotal = 0;
  for (let i = 0; i < n; i++) {
    const count = c.hostnameCounts[i]!;
    if (count === 0) return err(`its App ${i} has no hostname`);
    hostnameTotal += count;
    if (c.tlsNamespaces[i] !== NONE) tlsTotal++;
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
    const namespace = strings[c.secretNamespaces[i]!];
    const key = strings[c.secretKeys[i]!];
    const upstream = string(c.upstreams[i]!);
    const prefix = string(c.prefixes[i]!);
    const tlsNamespace = string(c.tlsNamespaces[i]!);
    if (
      namespace === undefined ||
      key === undefined ||
      (upstream === undefined && c.upstreams[i] !== NONE) ||
      (prefix === undefined && c.prefixes[i] !== NONE) ||
      (tlsNamespace === undefined && c.tlsNamespaces[i] !== NONE)
    )
      return err(`its App ${i} names a string it does not hold`);
    const end = h + c.hostnameCounts[i]!;
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
  const registry: Registry = Object.freeze({ apps: Object.freeze(apps) });
  const refused: RefusedApp[] = c.refused.map((r) => ({ ...r }));
  return ok({ under: { ...c.under }, contentHash: c.contentHash, registry, refused });
}
