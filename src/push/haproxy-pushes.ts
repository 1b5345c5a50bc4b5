// The two pushes of HAProxy's maps (haproxy-target.ts has the orderings they keep). Into the
// overlays (ADR 60): a Secret change, whose Apps' entries and credentials go into the overlays,
// then the REVISION. Whole: after a Registry change, a failure, a restart, drift, or an overlay
// past its bound, the routing map as a new version; the credentials go into their overlay when
// HAProxy's maps are known and it stays within its bound, else as a whole version of their own
// map; the routing overlay is emptied to the REVISION once the routing map is committed, and the
// credentials overlay with a whole credentials map.

import { ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import {
  type CredentialChanges,
  type CredentialLines,
  credentialChanges,
  credentialCount,
} from "./credential-lines.ts";
import { type MapNames, type RuntimeApi, replaceVersioned, silent } from "./haproxy-commands.ts";
import { credentialPieces } from "./haproxy-credentials.ts";
import { mapLines, mapPayloads, payloads, REVISION_KEY } from "./haproxy-map.ts";
import { type ChunkLines, changedApps, overlayCommands } from "./haproxy-overlay.ts";
import type { PushFailure } from "./target.ts";

/** What HAProxy was seen to hold after a push. */
export interface Held {
  readonly revision: number;
  readonly routes: RouteView["routes"];
  /** The view's routing lines (`mapLines`): the table under the routing overlay. */
  readonly lines: ChunkLines;
  readonly credentials: CredentialLines;
  /** The routing overlay's entries, App → entry (the REVISION aside). */
  readonly routingOverlay: ReadonlyMap<string, string>;
  /** The credentials the credentials overlay holds, App → value. */
  readonly credentialsOverlay: ReadonlyMap<string, string>;
  /** The Apps whose credential the credentials map beneath holds. */
  readonly credentialsBase: ReadonlySet<string>;
  /** The big maps' current versions (`curr_ver`), and the routing map's entries. */
  readonly versions: { readonly routing: string; readonly credentials: string };
  readonly routingEntries: number;
}

export interface PushContext {
  readonly api: RuntimeApi;
  readonly maps: MapNames;
  readonly payloadBytes: number;
  readonly maxOverlayApps: number;
}

/**
 * Pushes `view` with its routing map whole; `from` is what HAProxy holds (null: unknown),
 * `previous` the credentials of the last push that succeeded.
 */
export async function pushWhole(
  ctx: PushContext,
  view: RouteView,
  credentials: CredentialLines,
  from: Held | null,
  previous: CredentialLines,
): Promise<Result<Held, PushFailure>> {
  const { api, maps, payloadBytes } = ctx;
  const changes = credentialChanges(credentials, from?.credentials ?? previous);
  const credentialsOverlay = new Map(from?.credentialsOverlay ?? []);
  for (const line of changes.written) credentialsOverlay.set(line.app, line.value);
  const intoOverlay = from !== null && credentialsOverlay.size <= ctx.maxOverlayApps;
  let credentialsBase: ReadonlySet<string>;
  let credentialsVersion: string;
  // 1. The credentials the new entries flag, before them.
  if (intoOverlay) {
    const wrote = await writeCredentials(ctx, changes, from);
    if (!wrote.ok) return wrote;
    credentialsBase = from.credentialsBase;
    credentialsVersion = from.versions.credentials;
  } else {
    const dropped = new Set(changes.dropped);
    const kept = previous.map((chunk) => chunk.filter((l) => dropped.has(l.app)));
    const all = [...credentials, ...kept];
    const content = payloads(credentialPieces(all), payloadBytes);
    const count = credentialCount(all);
    const filled = await replaceVersioned(api, maps, maps.credentials, content, count, null);
    if (!filled.ok) return filled;
    credentialsVersion = filled.value;
    credentialsBase = new Set(all.flatMap((chunk) => chunk.map((l) => l.app)));
    credentialsOverlay.clear();
  }
  // 2. The routing map whole, then its overlay emptied to the REVISION, and the credentials
  //    overlay when the credentials went whole.
  const table = mapPayloads(view, payloadBytes);
  const base = credentialsBase.size;
  const pushed = await replaceVersioned(api, maps, maps.routing, table.payloads, table.lines, base);
  if (!pushed.ok) return pushed;
  const revision = [`${REVISION_KEY} ${view.revision}\n`];
  const revised = await replaceVersioned(api, maps, maps.routingOverlay, revision, 1, null);
  if (!revised.ok) return revised;
  if (!intoOverlay) {
    const emptied = await replaceVersioned(api, maps, maps.credentialsOverlay, [], 0, null);
    if (!emptied.ok) return emptied;
  }
  // 3. The credentials no entry flags any more.
  const deleted = await deleteDropped(ctx, changes.dropped, credentialsOverlay, credentialsBase);
  if (!deleted.ok) return deleted;
  return ok({
    revision: view.revision,
    routes: view.routes,
    lines: mapLines(view),
    credentials,
    routingOverlay: new Map(),
    credentialsOverlay,
    credentialsBase: without(credentialsBase, changes.dropped),
    versions: { routing: pushed.value, credentials: credentialsVersion },
    routingEntries: table.lines,
  });
}

/** A Secret change into the overlays; null when it must go whole. */
export async function pushOverlay(
  ctx: PushContext,
  view: RouteView,
  credentials: CredentialLines,
  from: Held,
): Promise<Result<Held, PushFailure> | null> {
  const { maps, payloadBytes, maxOverlayApps } = ctx;
  if (from.routes !== view.routes) return null;
  const lines = mapLines(view);
  const entries = changedApps(lines, from.lines, maxOverlayApps);
  if (entries === null) return null;
  const changes = credentialChanges(credentials, from.credentials);
  const routingOverlay = new Map([...from.routingOverlay, ...entries]);
  const credentialsOverlay = new Map(from.credentialsOverlay);
  for (const line of changes.written) credentialsOverlay.set(line.app, line.value);
  if (routingOverlay.size > maxOverlayApps || credentialsOverlay.size > maxOverlayApps) return null;
  // 1. The credentials the new entries flag, before them.
  const wrote = await writeCredentials(ctx, changes, from);
  if (!wrote.ok) return wrote;
  // 2. The changed Apps' entries, then the REVISION once they all were taken (commands joined by
  //    `;` run on past a refusal).
  const held = (app: string) => from.routingOverlay.has(app);
  const routing = overlayCommands(maps.routingOverlay, entries, held, payloadBytes);
  const revision = `set map ${maps.routingOverlay} ${REVISION_KEY} ${view.revision}`;
  const routed = await run(ctx.api, [...routing, revision], `set map ${maps.routingOverlay}`);
  if (!routed.ok) return routed;
  // 3. The credentials no entry flags any more.
  const deleted = await deleteDropped(
    ctx,
    changes.dropped,
    credentialsOverlay,
    from.credentialsBase,
  );
  if (!deleted.ok) return deleted;
  return ok({
    revision: view.revision,
    routes: view.routes,
    lines,
    credentials,
    routingOverlay,
    credentialsOverlay,
    credentialsBase: without(from.credentialsBase, changes.dropped),
    versions: from.versions,
    routingEntries: from.routingEntries,
  });
}

/**
 * `set` without `dropped`: the same set when none of them is in it (at 100k Apps the credentials
 * map's set is as large as the Registry, and a push copies it only when a credential left it).
 */
function without(set: ReadonlySet<string>, dropped: readonly string[]): ReadonlySet<string> {
  if (!dropped.some((app) => set.has(app))) return set;
  const out = new Set(set);
  for (const app of dropped) out.delete(app);
  return out;
}

/**
 * Writes the new and changed credentials of `changes` into the credentials overlay, `from`
 * telling which keys it holds. Holds Secret bytes: a refusal names the command's first words only.
 */
function writeCredentials(ctx: PushContext, changes: CredentialChanges, from: Held) {
  const { credentialsOverlay } = ctx.maps;
  const written = new Map(changes.written.map((l) => [l.app, l.value]));
  const held = (app: string) => from.credentialsOverlay.has(app);
  const commands = overlayCommands(credentialsOverlay, written, held, ctx.payloadBytes);
  return run(ctx.api, commands, `set map ${credentialsOverlay}`);
}

/**
 * Deletes each of `dropped` from the credentials overlay (`overlay`, from which it is removed) and
 * from the map beneath when `base` has it.
 */
function deleteDropped(
  ctx: PushContext,
  dropped: readonly string[],
  overlay: Map<string, string>,
  base: ReadonlySet<string>,
) {
  const deletions: string[] = [];
  for (const app of dropped) {
    if (overlay.delete(app)) deletions.push(`del map ${ctx.maps.credentialsOverlay} ${app}`);
    if (base.has(app)) deletions.push(`del map ${ctx.maps.credentials} ${app}`);
  }
  return run(ctx.api, deletions, "del map");
}

/** Runs commands that answer nothing when they succeed, in turn; HAProxy's first refusal. */
async function run(
  api: RuntimeApi,
  commands: Iterable<string>,
  what: string,
): Promise<Result<void, PushFailure>> {
  for (const command of commands) {
    const done = await api.run(command, what, silent);
    if (!done.ok) return done;
  }
  return ok(undefined);
}
