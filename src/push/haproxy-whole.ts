// A push that replaces HAProxy's routing map whole (haproxy-target.ts has the orderings it
// keeps): after a Registry change, a failure, a restart, drift, or an overlay past its bound. The
// credentials go into their overlay when HAProxy's maps are known and it stays within its bound,
// else as a whole version of their own map; the routing overlay is emptied to the REVISION once
// the routing map is committed, and the credentials overlay with a whole credentials map.

import { ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import { type CredentialLines, credentialChanges, credentialCount } from "./credential-lines.ts";
import { type MapNames, type RuntimeApi, replaceVersioned, silent } from "./haproxy-commands.ts";
import { credentialPieces } from "./haproxy-credentials.ts";
import { mapLines, mapPayloads, payloads, REVISION_KEY } from "./haproxy-map.ts";
import { type ChunkLines, overlayCommands } from "./haproxy-overlay.ts";
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
  /** The Apps whose credential the credentials overlay holds. */
  readonly credentialsOverlay: ReadonlySet<string>;
  /** The Apps whose credential the credentials map beneath holds. */
  readonly credentialsBase: ReadonlySet<string>;
}

export interface WholeContext {
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
  ctx: WholeContext,
  view: RouteView,
  credentials: CredentialLines,
  from: Held | null,
  previous: CredentialLines,
): Promise<Result<Held, PushFailure>> {
  const { api, maps, payloadBytes } = ctx;
  const run = async (commands: Iterable<string>, what: string) => {
    for (const command of commands) {
      const done = await api.run(command, what, silent);
      if (!done.ok) return done;
    }
    return ok(undefined);
  };
  const changes = credentialChanges(credentials, from?.credentials ?? previous);
  const credentialsOverlay = new Set(from?.credentialsOverlay ?? []);
  for (const line of changes.written) credentialsOverlay.add(line.app);
  const intoOverlay = from !== null && credentialsOverlay.size <= ctx.maxOverlayApps;
  let credentialsBase: Set<string>;
  // 1. The credentials the new entries flag, before them.
  if (intoOverlay) {
    const written = new Map(changes.written.map((l) => [l.app, l.value]));
    const held = (app: string) => from.credentialsOverlay.has(app);
    const commands = overlayCommands(maps.credentialsOverlay, written, held, payloadBytes);
    const wrote = await run(commands, `set map ${maps.credentialsOverlay}`);
    if (!wrote.ok) return wrote;
    credentialsBase = new Set(from.credentialsBase);
  } else {
    const dropped = new Set(changes.dropped);
    const kept = previous.map((chunk) => chunk.filter((l) => dropped.has(l.app)));
    const all = [...credentials, ...kept];
    const content = payloads(credentialPieces(all), payloadBytes);
    const count = credentialCount(all);
    const filled = await replaceVersioned(api, maps, maps.credentials, content, count, null);
    if (!filled.ok) return filled;
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
  const deletions: string[] = [];
  for (const app of changes.dropped) {
    if (credentialsOverlay.delete(app)) deletions.push(`del map ${maps.credentialsOverlay} ${app}`);
    if (credentialsBase.delete(app)) deletions.push(`del map ${maps.credentials} ${app}`);
  }
  const deleted = await run(deletions, "del map");
  if (!deleted.ok) return deleted;
  return ok({
    revision: view.revision,
    routes: view.routes,
    lines: mapLines(view),
    credentials,
    routingOverlay: new Map(),
    credentialsOverlay,
    credentialsBase,
  });
}
