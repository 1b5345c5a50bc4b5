// The verification of HAProxy's maps between deep ones (ADR 70): what `show map` lists of the two
// big maps (the current version and its entries) and every entry of the two overlays, which a
// Secret change writes (ADR 60) and which stay small. At 100k Apps reading the big maps whole is
// 12 MB and 200 ms of the sidecar's main thread; this is a few kB. It finds HAProxy restarted, an
// overlay entry written, changed or lost by another writer, an entry added to or deleted from a
// big map, and a big map replaced by a version of someone else's; an entry of a big map changed in
// place (`set map`) only the deep verification finds. The digest it compares is what the push
// that left `Held` left, not a function of the view alone: each push's Held is kept per view.

import { cachedPer } from "../cached-per.ts";
import { REVISION_KEY } from "./haproxy-map.ts";
import type { Held } from "./haproxy-pushes.ts";
import { addLine, noLines, sumText } from "./line-sum.ts";

/** One big map as `show map` lists it. */
export interface Listed {
  /** `curr_ver`: the version requests read. */
  readonly version: string;
  /** `entry_cnt`: every version's entries (one version once a commit purged the older ones). */
  readonly entries: number;
}

/** What a shallow verification reads. */
export interface Shallow {
  readonly routing: Listed;
  readonly credentials: Listed;
  /** The routing overlay's entries, REVISION included, key → value. */
  readonly routingOverlay: Iterable<readonly [string, string]>;
  readonly credentialsOverlay: Iterable<readonly [string, string]>;
}

/** `map`'s line in the answer to `show map` (no map named), or undefined. */
export function listed(answer: string, map: string): Listed | undefined {
  const line = answer.split("\n").find((l) => l.includes(` (${map}) `));
  const version = line === undefined ? null : /\bcurr_ver=(\d+)/.exec(line);
  const entries = line === undefined ? null : /\bentry_cnt=(\d+)/.exec(line);
  if (version === null || entries === null) return undefined;
  return { version: version[1]!, entries: Number(entries[1]) };
}

/** The digest a shallow verification compares: order-free over each overlay's lines. */
export function shallowDigest(read: Shallow): string {
  const sum = (entries: Iterable<readonly [string, string]>) => {
    const lines = noLines();
    for (const [key, value] of entries) addLine(lines, `${key} ${value}`);
    return sumText(lines);
  };
  const { routing, credentials } = read;
  return [
    `shallow ${routing.version}:${routing.entries} ${credentials.version}:${credentials.entries}`,
    sum(read.routingOverlay),
    sum(read.credentialsOverlay),
  ].join(" ");
}

/**
 * The shallow digest of HAProxy while it holds what the push that gave `held` left; once per Held,
 * in proportion to the overlays, not the Registry.
 */
export const expectedShallow = cachedPer((held: Held): string =>
  shallowDigest({
    routing: { version: held.versions.routing, entries: held.routingEntries },
    credentials: { version: held.versions.credentials, entries: held.credentialsBase.size },
    routingOverlay: [[REVISION_KEY, String(held.revision)], ...held.routingOverlay],
    credentialsOverlay: held.credentialsOverlay,
  }),
);
