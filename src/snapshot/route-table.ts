import type { AppSpec, Registry, SecretRef } from "../registry/schema.ts";
import { freezeArray, freezeMap } from "./freeze.ts";
import { freezeIndex, SecretIndex } from "./secret-index.ts";
import type { Conflict, RouteTable } from "./types.ts";

/** The slots of the Apps that reference a Secret. */
export function slotsOf(routes: RouteTable, namespace: string, name: string): readonly number[] {
  const slots = routes.slotsBySecret.get(namespace, name);
  return slots === undefined ? [] : typeof slots === "number" ? [slots] : slots;
}

/**
 * The slot of the App with this name, or undefined. A binary search over the sorted names rather
 * than a Map: a 100k-entry Map costs tens of milliseconds to build, and only the status API asks.
 */
export function slotOf(routes: RouteTable, name: string): number | undefined {
  const { names } = routes;
  let lo = 0;
  let hi = names.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const probe = names[mid]!;
    if (probe === name) return mid;
    if (probe < name) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** The Registry's Apps in slot order (sorted by name), so every derived index is order-independent. */
export function sortedSpecs(registry: Registry | null): readonly AppSpec[] {
  if (registry === null) return freezeArray([]);
  return freezeArray(
    [...registry.apps].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  );
}

/**
 * Builds the hostname side of a Snapshot in one pass over the sorted Apps: the exact and wildcard
 * indexes and the conflicts; the Secret → Apps index when first read (`secretSlots`: at 100k
 * Apps, 40 of 73 ms, which the first Snapshot of a Registry does not need). Apps are visited in
 * reverse name order and every claim overwrites the previous one, so the last writer of a
 * hostname is the App whose name sorts first (the winner, README "The Registry document") and a
 * claim costs one Map operation, not a get and a set: at 100k Apps the build is bound by memory
 * latency, about one cache miss per hash-table operation.
 */
export function buildRouteTable(specs: readonly AppSpec[]): RouteTable {
  const exact = new Map<string, number>();
  const wildcard = new Map<string, number>();
  // Hostnames and patterns claimed more than once: found when a claim does not grow its index.
  const contested = new Set<string>();

  for (let slot = specs.length - 1; slot >= 0; slot--) {
    for (const pattern of specs[slot]!.hostnames) {
      const isWildcard = pattern.startsWith("*.");
      const index = isWildcard ? wildcard : exact;
      const indexKey = isWildcard ? pattern.slice(2) : pattern;
      const before = index.size;
      index.set(indexKey, slot);
      if (index.size === before) contested.add(pattern);
    }
  }
  let slotsBySecret: RouteTable["slotsBySecret"] | undefined;
  return Object.freeze({
    specs,
    names: freezeArray(specs.map((s) => s.name)),
    exact: freezeMap(exact),
    wildcard: freezeMap(wildcard),
    get slotsBySecret() {
      slotsBySecret ??= secretSlots(specs);
      return slotsBySecret;
    },
    conflicts: conflictsOf(specs, contested),
    hostnameCount: exact.size + wildcard.size,
  });
}

/** The Secret → Apps index (App and TLS Secrets) of the sorted Apps. */
function secretSlots(specs: readonly AppSpec[]): RouteTable["slotsBySecret"] {
  const slotsBySecret = new SecretIndex<number | readonly number[]>();
  // Secrets referenced by more than one App: found, like conflicts, when a set does not grow.
  const shared = new SecretIndex<true>();
  for (let slot = specs.length - 1; slot >= 0; slot--) {
    const spec = specs[slot]!;
    const { namespace, name } = spec.secretRef;
    const secrets = slotsBySecret.size;
    slotsBySecret.set(namespace, name, slot);
    if (slotsBySecret.size === secrets) shared.set(namespace, name, true);
    const tls = tlsSecretOf(spec);
    if (tls !== null) {
      const before = slotsBySecret.size;
      slotsBySecret.set(tls.namespace, tls.name, slot);
      if (slotsBySecret.size === before) shared.set(tls.namespace, tls.name, true);
    }
  }
  if (shared.size > 0) listSharedSecrets(specs, shared, slotsBySecret);
  return freezeIndex(slotsBySecret);
}

/** Replaces the one slot of each shared Secret with every slot that references it, ascending. */
function listSharedSecrets(
  specs: readonly AppSpec[],
  shared: SecretIndex<true>,
  slotsBySecret: SecretIndex<number | readonly number[]>,
): void {
  const lists = new SecretIndex<number[]>();
  const add = ({ namespace, name }: SecretRef, slot: number) => {
    if (!shared.has(namespace, name)) return;
    const list = lists.get(namespace, name);
    if (list === undefined) lists.set(namespace, name, [slot]);
    else list.push(slot);
  };
  specs.forEach((spec, slot) => {
    add(spec.secretRef, slot);
    const tls = tlsSecretOf(spec);
    if (tls !== null) add(tls, slot);
  });
  for (const [namespace, name, list] of lists.entries())
    slotsBySecret.set(namespace, name, freezeArray(list));
}

/** The App's TLS Secret when it is another Secret than its `secretRef`'s (ADR 56). */
function tlsSecretOf(spec: AppSpec): SecretRef | null {
  const tls = spec.tls?.secretRef;
  if (tls === undefined) return null;
  const { namespace, name } = spec.secretRef;
  return tls.namespace === namespace && tls.name === name ? null : tls;
}

/** The conflicts, sorted by hostname; each lists its claimants in name order, the first wins. */
function conflictsOf(
  specs: readonly AppSpec[],
  contested: ReadonlySet<string>,
): readonly Conflict[] {
  if (contested.size === 0) return freezeArray([]);
  // A second pass, only when there is a conflict: cheaper than remembering every claim.
  const claimants = new Map<string, string[]>();
  for (const spec of specs) {
    for (const pattern of spec.hostnames) {
      if (!contested.has(pattern)) continue;
      const names = claimants.get(pattern);
      if (names === undefined) claimants.set(pattern, [spec.name]);
      else names.push(spec.name);
    }
  }
  return freezeArray(
    [...claimants.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([hostname, [winner, ...losers]]) =>
        Object.freeze({ hostname, winner: winner!, losers: freezeArray(losers) }),
      ),
  );
}
