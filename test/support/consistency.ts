import { allApps, appAt } from "../../src/snapshot/app-table.ts";
import { stateOf } from "../../src/snapshot/credential.ts";
import { slotOf, slotsOf } from "../../src/snapshot/route-table.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";

/**
 * Lists every way a Snapshot breaks its whole-state invariant: each index entry points into the
 * App set at an App that declares that hostname; each App hostname is indexed to it or is a lost
 * conflict; slots, names, readiness and counts agree. Empty means consistent.
 */
function checkConsistency(snapshot: Snapshot): string[] {
  const problems: string[] = [];
  const { routes, apps } = snapshot;
  if (apps.size !== routes.names.length)
    problems.push(`apps.size ${apps.size} != ${routes.names.length} names`);
  const check = (kind: string, key: string, pattern: string, slot: number) => {
    const app = appAt(apps, slot);
    if (app === undefined) problems.push(`${kind} ${key} points at missing slot ${slot}`);
    else if (!app.hostnames.includes(pattern))
      problems.push(`${kind} ${key} points at ${app.name}, which does not declare it`);
  };
  for (const [host, slot] of routes.exact) check("exact", host, host, slot);
  for (const [suffix, slot] of routes.wildcard) check("wildcard", suffix, `*.${suffix}`, slot);

  const lost = new Map(routes.conflicts.map((c) => [c.hostname, c]));
  let slot = 0;
  let ready = 0;
  let previousName = "";
  for (const app of allApps(apps)) {
    if (app.name !== routes.names[slot])
      problems.push(`slot ${slot} holds ${app.name}, not ${routes.names[slot]}`);
    if (slotOf(routes, app.name) !== slot) problems.push(`slotOf(${app.name}) != ${slot}`);
    if (slot > 0 && !(previousName < app.name))
      problems.push(`apps not strictly sorted at ${app.name}`);
    if (
      app.ready !== (app.reason === null) ||
      // A value is kept only where a served credential reads it (ADR 68).
      (app.secretValue !== null) !== (app.credential !== null) ||
      app.secretValue === "" ||
      app.state !== stateOf(app.reason) ||
      (app.credential !== null) !== (app.ready && app.credentialPrefix !== null)
    ) {
      problems.push(`${app.name}: ready, reason, state, value and credential disagree`);
    }
    if (!slotsOf(routes, app.secretRef.namespace, app.secretRef.name).includes(slot)) {
      problems.push(`${app.name}: its Secret does not list it`);
    }
    for (const pattern of app.hostnames) {
      const wildcard = pattern.startsWith("*.");
      const owner = (wildcard ? routes.wildcard : routes.exact).get(
        wildcard ? pattern.slice(2) : pattern,
      );
      if (owner === slot) continue;
      const conflict = lost.get(pattern);
      if (
        conflict === undefined ||
        !conflict.losers.includes(app.name) ||
        routes.names[owner ?? -1] !== conflict.winner
      ) {
        problems.push(`${app.name}: ${pattern} is neither indexed to it nor a lost conflict`);
      }
    }
    if (app.ready) ready++;
    previousName = app.name;
    slot++;
  }
  if (ready !== apps.readyCount) problems.push(`readyCount ${apps.readyCount} != ${ready}`);
  if (routes.hostnameCount !== routes.exact.size + routes.wildcard.size)
    problems.push("hostnameCount is wrong");
  return problems;
}

/** Throws when the Snapshot is inconsistent: a broken invariant is a bug, never an expected failure. */
export function assertConsistent(snapshot: Snapshot): void {
  const problems = checkConsistency(snapshot);
  if (problems.length > 0) {
    throw new Error(
      `inconsistent snapshot r${snapshot.revision}: ${problems.slice(0, 5).join("; ")}`,
    );
  }
}
