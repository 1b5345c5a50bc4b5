// The zero-hop table pushed into HAProxy's two maps: the routing map (haproxy-map.ts) and the
// credentials map (haproxy-credentials.ts), written key by key, for its keys are Apps, each one
// atomic on its own. The routing map goes whole as a new version (filled in payloads that fit the
// runtime API's buffer, then committed, so requests see the old entries or the new ones and never
// a mix) after a Registry change, a failure, a restart, drift, or past MAX_SET_ENTRIES changed
// entries; otherwise (Secret changes, ADR 58) the changed entries are set on its current version
// (haproxy-map-delta.ts), then the REVISION key: a rotation, which changes no entry, sets the
// credential and the REVISION alone.
//
// The orderings, so that no request for an App its routing entry flags finds no credential
// (haproxy.cfg answers that 503 not-synced, never goes on without it):
// - credentials new or changed are written before the routing entries that flag them (commit or
//   `set map`: a new App, an App gaining one); a rotation is that write alone, then the REVISION;
// - credentials of Apps the new table drops or no longer flags are deleted after the routing
//   entries change, when no entry flags them (a request that read its entry before that change
//   and looks its credential up after the deletion, a connection later, is refused: closed, not
//   open);
// - a whole push (the first, after a failure, a restart, drift) commits the credentials map as
//   one version first, holding besides the new table's the ones last pushed that it drops, which
//   the old entries may flag, deleted after the routing commit; only what this process never
//   pushed (another sidecar's, a table changed behind its back) can be missing meanwhile: 503;
// - a restarted HAProxy holds neither map: `held` then reads no REVISION, which makes the next
//   push whole; a restart in the middle of a push fails it (a `set map` of a key not held) or is
//   seen before the routing commit by the credentials map's entry count;
// - a request racing a rotation reads the old value or the new one, whole; its x-mirror-revision
//   comes from the REVISION key, so a request racing a push may carry the revision just after the
//   one its entry came from.
// A failure before the routing commit leaves the old entries in place; an uncommitted version is
// dropped by HAProxy at the next commit. A failure among the `set map`s leaves each key the old
// view's entry or the new one's and the old REVISION; either way the target forgets what HAProxy
// holds, so the next push is whole. A verification reads both maps back.
// Certificates by SNI (ADR 56), when a crt-list is named, follow the maps on every push
// (haproxy-certificate-sync.ts): whole after whatever makes the maps whole, and read back by a
// verification beside them.

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { PushView, RouteView } from "../snapshot/types.ts";
import { type CredentialLines, credentialChanges, credentialCount } from "./credential-lines.ts";
import { haproxyCertificateSync } from "./haproxy-certificate-sync.ts";
import { rejected, replaceVersioned, runtimeApi, silent } from "./haproxy-commands.ts";
import {
  credentialCommand,
  credentialPieces,
  credentialsDigest,
  haproxyCredentials,
} from "./haproxy-credentials.ts";
import {
  mapDigest,
  mapLines,
  mapPayloads,
  parseHeldRevision,
  payloads,
  REVISION_KEY,
} from "./haproxy-map.ts";
import { changedLines, MAX_SET_ENTRIES, setCommands } from "./haproxy-map-delta.ts";
import { runtimeAnswer } from "./haproxy-runtime.ts";
import { type ShownMapRules, shownMapDigest } from "./shown-map.ts";
import { sha256 } from "./table-digest.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface HaproxyTargetOptions {
  readonly name?: string;
  /** The path of the stats socket (`stats socket <path> mode 600 level admin`). */
  readonly socket: string;
  /** The routing map file exactly as haproxy.cfg names it in `map_str(...)`. */
  readonly map: string;
  /** The credentials map file exactly as haproxy.cfg names it. */
  readonly credentialsMap: string;
  /**
   * The crt-list exactly as haproxy.cfg's `bind ... ssl crt-list` names it: each App's
   * certificate is served by SNI through it. None: certificates are not pushed.
   */
  readonly crtList?: string;
  /** Per command; a push of 10k Apps is about 45 commands, one connection each. */
  readonly timeoutMs?: number;
  /**
   * Bytes of payload per `add map` command, and of `;`-joined `set map` commands per line;
   * HAProxy's default tune.bufsize is 16384.
   */
  readonly payloadBytes?: number;
  /** The most routing entries a push changes by `set map` (ADR 58); MAX_SET_ENTRIES by default. */
  readonly maxSetEntries?: number;
}

/** Where the zero-hop haproxy.cfg (manifests/data-planes/haproxy/zero-hop) reads its map. */
export const DEFAULT_HAPROXY_MAP = "/usr/local/etc/haproxy/replica-mirror.map";

/** What HAProxy was seen to hold after a push: the view's routing lines and credentials. */
interface Held {
  readonly revision: number;
  readonly routes: RouteView["routes"];
  readonly lines: readonly (readonly string[])[];
  readonly credentials: CredentialLines;
}

/** A PushTarget for HAProxy 2.6+ over its runtime API, with the zero-hop haproxy.cfg. */
export function haproxyTarget(options: HaproxyTargetOptions): PushTarget {
  const { socket, map, credentialsMap } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const payloadBytes = options.payloadBytes ?? 12_000;
  const maxSetEntries = options.maxSetEntries ?? MAX_SET_ENTRIES;
  const certificates =
    options.crtList === undefined
      ? null
      : haproxyCertificateSync({ socket, crtList: options.crtList, timeoutMs });
  const api = runtimeApi(socket, timeoutMs);
  const maps = { routing: map, credentials: credentialsMap };
  /** Runs commands that answer nothing when they succeed, in turn; HAProxy's first refusal. */
  async function runSilent(
    commands: Iterable<string>,
    what: string,
  ): Promise<Result<void, PushFailure>> {
    for (const command of commands) {
      const done = await api.run(command, what, silent);
      if (!done.ok) return done;
    }
    return ok(undefined);
  }

  // What HAProxy holds as last pushed; null when unknown: the next push is whole.
  let held: Held | null = null;
  // The credentials of the last push that succeeded, kept when `held` is lost: a whole push
  // keeps those it drops until its routing commit.
  let last: CredentialLines = [];

  async function pushView(view: RouteView, from: Held | null): Promise<Result<void, PushFailure>> {
    const credentials = haproxyCredentials(view);
    const changes = credentialChanges(credentials, from?.credentials ?? last);
    const count = credentialCount(credentials) + changes.dropped.length;
    // 1. The credentials the new entries flag, before them.
    if (from === null) {
      const dropped = new Set(changes.dropped);
      const kept = last.map((chunk) => chunk.filter((l) => dropped.has(l.app)));
      const content = payloads(credentialPieces([...credentials, ...kept]), payloadBytes);
      const filled = await replaceVersioned(api, maps, credentialsMap, content, count, null);
      if (!filled.ok) return filled;
    } else {
      const commands = changes.written.map((line) =>
        credentialCommand(credentialsMap, line, !changes.added.has(line.app)),
      );
      const written = await runSilent(commands, `set map ${credentialsMap}`);
      if (!written.ok) return written;
    }
    // 2. The routing entries: those changed on the current version then the REVISION, or a new
    //    version whole.
    const lines = mapLines(view);
    const changed =
      from !== null && from.routes === view.routes
        ? changedLines(lines, from.lines, maxSetEntries)
        : null;
    if (changed !== null) {
      const set = `set map ${map}`;
      const entries = await runSilent(setCommands(map, changed, payloadBytes), set);
      if (!entries.ok) return entries;
      const revised = await runSilent([`${set} ${REVISION_KEY} ${view.revision}`], set);
      if (!revised.ok) return revised;
    } else {
      const content = mapPayloads(view, payloadBytes);
      const pushed = await replaceVersioned(api, maps, map, content.payloads, content.lines, count);
      if (!pushed.ok) return pushed;
    }
    // 3. The credentials no entry flags any more.
    const deletions = changes.dropped.map((app) => `del map ${credentialsMap} ${app}`);
    return runSilent(deletions, `del map ${credentialsMap}`);
  }

  return {
    name: options.name ?? "haproxy",
    async push(view, pushOptions): Promise<Result<void, PushFailure>> {
      const from = pushOptions?.whole === true ? null : held;
      held = null;
      const pushed = await pushView(view, from);
      if (!pushed.ok) return pushed;
      const served = (await certificates?.push(view, from === null)) ?? pushed;
      if (!served.ok) return served;
      const credentials = haproxyCredentials(view);
      held = { revision: view.revision, routes: view.routes, lines: mapLines(view), credentials };
      last = credentials;
      return pushed;
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const get = `get map ${map} ${REVISION_KEY}`;
      const revision = await api.run(get, `get map ${map}`, parseHeldRevision);
      // Not the revision last pushed: HAProxy restarted, or another writer; push whole next.
      if (revision.ok && revision.value !== held?.revision) held = null;
      return revision;
    },
    // Every entry of both maps' current versions (10k Apps: 600 kB of routing, and the
    // credentials, 10 MB at 1 KiB each): HAProxy cannot hash a map.
    async heldDigest(): Promise<Result<string | null, PushFailure>> {
      const routing = await shown(map, { valueSpaces: false, required: REVISION_KEY });
      if (!routing.ok || routing.value === null) return routing;
      const credentials = await shown(credentialsMap, { valueSpaces: true });
      if (!credentials.ok) return credentials;
      const served = (await certificates?.heldDigest()) ?? ok("");
      if (!served.ok) return served;
      return ok(withCertificates(sha256(`${routing.value}\n${credentials.value}`), served.value));
    },
    digestOf: cachedPer((view: PushView) =>
      withCertificates(
        sha256(`${mapDigest(view)}\n${credentialsDigest(haproxyCredentials(view))}`),
        certificates?.digestOf(view) ?? "",
      ),
    ),
  };

  /** The digest of the answer to `show map <name>` (shown-map.ts), read as bytes. */
  async function shown(
    name: string,
    rules: ShownMapRules,
  ): Promise<Result<string | null, PushFailure>> {
    const show = `show map ${name}`;
    const answer = await runtimeAnswer(socket, show, timeoutMs);
    if (!answer.ok) return answer;
    const value = shownMapDigest(answer.value, rules);
    if (value !== undefined) return ok(value);
    // HAProxy's words (the first line) unless they are an entry of a map, whose value may be an
    // App's credential: a message must never show one.
    const text = answer.value.toString("utf8").replace(/\n+$/, "");
    if (!/^0x[0-9a-f]+ /.test(text)) return rejected(show, text);
    return err({ reason: "protocol", message: `'${show}': a line is not an entry of a map` });
  }
}

/** The maps' digest, with the certificates' when there are any (none: the maps' alone, as before). */
const withCertificates = (maps: string, certificates: string) =>
  certificates === "" ? maps : sha256(`${maps}\n${certificates}`);
