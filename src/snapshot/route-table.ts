import type { AppSpec, Registry } from "../registry/schema.ts";
import { freezeArray, freezeMap } from "./freeze.ts";
import { freezeIndex, SecretIndex } from "./secret-index.ts";
import type { Conflict, RouteTable } from "./types.ts";

/** The slots of the Apps that reference a Secret. */
export function slotsOf(routes: RouteTable, namespace: string, name: string): readonly number[] {
  const slots = routes.slotsBySecret.get(namespace, name);
  return slots === undefined ? [] : typeof slots === "number" ? [slots] : slots;
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
 * indexes, the Secret → Apps index and the conflicts. Because Apps are visited in name order, the
 * first claimant of a hostname is the winner SPEC §2 names.
 */
export function buildRouteTable(specs: readonly AppSpec[]): RouteTable {
  const slotByName = new Map<string, number>();
  const exact = new Map<string, number>();
  const wildcard = new Map<string, number>();
  const slotsBySecret = new SecretIndex<number | number[]>();
  const conflicts = new Map<string, { winner: string; losers: string[] }>();

  specs.forEach((spec, slot) => {
    slotByName.set(spec.name, slot);
    const { namespace, name } = spec.secretRef;
    const slots = slotsBySecret.get(namespace, name);
    if (slots === undefined) slotsBySecret.set(namespace, name, slot);
    else if (typeof slots === "number") slotsBySecret.set(namespace, name, [slots, slot]);
    else slots.push(slot);
    for (const pattern of spec.hostnames) {
      const isWildcard = pattern.startsWith("*.");
      const index = isWildcard ? wildcard : exact;
      const indexKey = isWildcard ? pattern.slice(2) : pattern;
      const owner = index.get(indexKey);
      if (owner === undefined) {
        index.set(indexKey, slot);
        continue;
      }
      const conflict = conflicts.get(pattern);
      if (conflict === undefined)
        conflicts.set(pattern, { winner: specs[owner]!.name, losers: [spec.name] });
      else conflict.losers.push(spec.name);
    }
  });

  const conflictList: Conflict[] = [...conflicts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([hostname, c]) =>
      Object.freeze({ hostname, winner: c.winner, losers: freezeArray(c.losers) }),
    );
  for (const [, , slots] of slotsBySecret.entries())
    if (typeof slots !== "number") Object.freeze(slots);

  return Object.freeze({
    specs,
    names: freezeArray(specs.map((s) => s.name)),
    slotByName: freezeMap(slotByName),
    exact: freezeMap(exact),
    wildcard: freezeMap(wildcard),
    slotsBySecret: freezeIndex<number | readonly number[]>(slotsBySecret),
    conflicts: freezeArray(conflictList),
    hostnameCount: exact.size + wildcard.size,
  });
}
