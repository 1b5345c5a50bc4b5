// The zero-hop table pushed into HAProxy's maps (manifests/data-planes/haproxy/zero-hop): the
// routing map (haproxy-map.ts) and the credentials map (haproxy-credentials.ts), each with an
// overlay beside it (ADR 60) that haproxy.cfg reads first: the routing overlay keyed by App (the
// entry every host of that App gets instead) plus the REVISION, the credentials overlay keyed by
// App like the map beneath it. The maps go whole as new versions (filled in payloads that fit the
// runtime API's buffer, then committed: requests see the old entries or the new ones and never a
// mix) after a Registry change, a failure, a restart, drift, or when the overlay would pass its
// bound; then the overlays are emptied to the REVISION. Otherwise (Secret changes) the changed
// Apps' entries and credentials go into the overlays (haproxy-overlay.ts), then the REVISION: a
// rotation, which changes no entry, writes one credential and the REVISION. HAProxy 2.6 walks a
// whole map to find a key it sets or deletes, so nothing but a whole push touches the big maps'
// keys, and a change costs in proportion to itself, not to the Registry.
//
// The orderings, so that no request for an App its routing entry flags finds no credential
// (haproxy.cfg answers that 503 not-synced, never goes on without it):
// - credentials new or changed are written before the routing entries that flag them; a rotation
//   is that write alone, then the REVISION;
// - credentials of Apps the new table drops or no longer flags are deleted after the routing
//   entries change, when no entry flags them (a request that read its entry before that change
//   and looks its credential up after the deletion, a connection later, is refused: closed, not
//   open);
// - a whole push commits the credentials map as one version first, holding besides the new
//   table's the ones last pushed that it drops, which the old entries may flag, deleted after the
//   routing commit; then the routing map, then the emptied overlays (until then an overlay's App
//   gets the entry or credential of the Snapshot before: each App some Snapshot's, whole);
// - a restarted HAProxy holds no map: `held` then reads no REVISION, which makes the next push
//   whole; a restart in the middle of a push fails it (a `set map` of a key not held) or is seen
//   before the routing commit by the credentials map's entry count;
// - a request racing a push reads an App's old entry or its new one, whole, every host of the App
//   alike (one overlay key); its x-mirror-revision comes from the REVISION key, so a request
//   racing a push may carry the revision just after the one its entry came from.
// A failure before a commit leaves the old entries in place; an uncommitted version is dropped by
// HAProxy at the next commit. A failure among overlay writes leaves each App the old Snapshot's
// entry or the new one's and the old REVISION; either way the target forgets what HAProxy holds,
// so the next push is whole. A deep verification reads all four maps back.
// Certificates by SNI (ADR 56), when a crt-list is named, follow the maps on every push
// (haproxy-certificate-sync.ts): whole after whatever makes the maps whole, and read back by a
// verification beside them. A verification reads the overlays and what `show map` lists of the big
// maps (haproxy-shallow.ts); a deep one reads the big maps too (ADR 70).

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { PushView } from "../snapshot/types.ts";
import type { CredentialLines } from "./credential-lines.ts";
import { haproxyCertificateSync } from "./haproxy-certificate-sync.ts";
import { type MapNames, rejected, runtimeApi } from "./haproxy-commands.ts";
import { credentialsDigest, haproxyCredentials } from "./haproxy-credentials.ts";
import { mapDigest, parseHeldRevision, REVISION_KEY } from "./haproxy-map.ts";
import { MAX_OVERLAY_APPS, overlayOf } from "./haproxy-overlay.ts";
import { type Held, pushOverlay, pushWhole } from "./haproxy-pushes.ts";
import { runtimeAnswer } from "./haproxy-runtime.ts";
import { expectedShallow, listed, shallowDigest } from "./haproxy-shallow.ts";
import {
  type ShownMapOverlay,
  type ShownMapRules,
  shownEntries,
  shownMapDigest,
} from "./shown-map.ts";
import { sha256 } from "./table-digest.ts";
import type { PushFailure, PushTarget, VerifyOptions } from "./target.ts";

export interface HaproxyTargetOptions {
  readonly name?: string;
  /** The path of the stats socket (`stats socket <path> mode 600 level admin`). */
  readonly socket: string;
  /**
   * The routing map file exactly as haproxy.cfg names it in `map_str(...)`; its overlay is
   * `overlayOf` it (haproxy-overlay.ts).
   */
  readonly map: string;
  /** The credentials map file exactly as haproxy.cfg names it; its overlay likewise. */
  readonly credentialsMap: string;
  /**
   * The crt-list exactly as haproxy.cfg's `bind ... ssl crt-list` names it: each App's
   * certificate is served by SNI through it. None: certificates are not pushed.
   */
  readonly crtList?: string;
  /** Per command; a push of 10k Apps is about 45 commands, one connection each. */
  readonly timeoutMs?: number;
  /**
   * Bytes of payload per `add map` command, and of `;`-joined overlay commands per line;
   * HAProxy's default tune.bufsize is 16384.
   */
  readonly payloadBytes?: number;
  /** The most Apps an overlay holds before a push goes whole (ADR 60); 0: every push whole. */
  readonly maxOverlayApps?: number;
}

/** Where the zero-hop haproxy.cfg (manifests/data-planes/haproxy/zero-hop) reads its map. */
export const DEFAULT_HAPROXY_MAP = "/usr/local/etc/haproxy/replica-mirror.map";

/** A PushTarget for HAProxy 2.6+ over its runtime API, with the zero-hop haproxy.cfg. */
export function haproxyTarget(options: HaproxyTargetOptions): PushTarget {
  const { socket } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const payloadBytes = options.payloadBytes ?? 12_000;
  const maxOverlayApps = options.maxOverlayApps ?? MAX_OVERLAY_APPS;
  const certificates =
    options.crtList === undefined
      ? null
      : haproxyCertificateSync({ socket, crtList: options.crtList, timeoutMs });
  const api = runtimeApi(socket, timeoutMs);
  const maps: MapNames = {
    routing: options.map,
    credentials: options.credentialsMap,
    routingOverlay: overlayOf(options.map),
    credentialsOverlay: overlayOf(options.credentialsMap),
  };
  // What HAProxy holds as last pushed; null when unknown: the next push is whole.
  let held: Held | null = null;
  // The credentials of the last push that succeeded, kept when `held` is lost: a whole push
  // keeps those it drops until its routing commit.
  let last: CredentialLines = [];
  // What each view's last push left, for its shallow digest.
  const pushedAs = new WeakMap<PushView, Held>();

  return {
    name: options.name ?? "haproxy",
    async push(view, pushOptions): Promise<Result<void, PushFailure>> {
      const from = pushOptions?.whole === true ? null : held;
      held = null;
      const credentials = haproxyCredentials(view);
      const ctx = { api, maps, payloadBytes, maxOverlayApps };
      const partial = from === null ? null : await pushOverlay(ctx, view, credentials, from);
      const pushed = partial ?? (await pushWhole(ctx, view, credentials, from, last));
      if (!pushed.ok) return pushed;
      const served = (await certificates?.push(view, from === null)) ?? ok(undefined);
      if (!served.ok) return served;
      held = pushed.value;
      pushedAs.set(view, pushed.value);
      last = credentials;
      return ok(undefined);
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const get = `get map ${maps.routingOverlay} ${REVISION_KEY}`;
      const revision = await api.run(get, `get map ${maps.routingOverlay}`, parseHeldRevision);
      // Not the revision last pushed: HAProxy restarted, or another writer; push whole next.
      if (revision.ok && revision.value !== held?.revision) held = null;
      return revision;
    },
    // Deep: every entry of the four maps' current versions (10k Apps: 600 kB of routing, and the
    // credentials, 10 MB at 1 KiB each): HAProxy cannot hash a map. The big maps are read as
    // bytes with the overlays' entries put over theirs: the table a request sees.
    async heldDigest(verify?: VerifyOptions): Promise<Result<string | null, PushFailure>> {
      if (verify?.deep !== true) return shallow();
      // The big maps first, their overlays last: a push during the reading changes the overlays
      // only, and the few ms of reading them is all it can overlap (pusher.ts).
      const routingBytes = await runtimeAnswer(socket, `show map ${maps.routing}`, timeoutMs);
      if (!routingBytes.ok) return routingBytes;
      const credentialsBytes = await runtimeAnswer(
        socket,
        `show map ${maps.credentials}`,
        timeoutMs,
      );
      if (!credentialsBytes.ok) return credentialsBytes;
      const overlay = await shown(maps.routingOverlay, NO_SPACES, shownEntries);
      if (!overlay.ok) return overlay;
      const revision = overlay.value.get(REVISION_KEY);
      if (revision === undefined) return ok(null);
      overlay.value.delete(REVISION_KEY);
      const credentialsOverlay = await shown(maps.credentialsOverlay, SPACES, shownEntries);
      if (!credentialsOverlay.ok) return credentialsOverlay;
      const byKey = new Map([[REVISION_KEY, revision]]);
      const routing = await digestOf(maps.routing, routingBytes.value, NO_SPACES, {
        byKey,
        byApp: overlay.value,
      });
      if (!routing.ok || routing.value === null) return routing;
      const credentials = await digestOf(maps.credentials, credentialsBytes.value, SPACES, {
        byKey: credentialsOverlay.value,
      });
      if (!credentials.ok) return credentials;
      const served = (await certificates?.heldDigest()) ?? ok("");
      if (!served.ok) return served;
      return ok(withCertificates(sha256(`${routing.value}\n${credentials.value}`), served.value));
    },
    digestOf(view: PushView, verify?: VerifyOptions): string {
      const served = certificates?.digestOf(view) ?? "";
      if (verify?.deep === true) return withCertificates(deepDigestOf(view), served);
      const pushed = pushedAs.get(view);
      // Never pushed here: no digest read matches it.
      return pushed === undefined ? "" : withCertificates(expectedShallow(pushed), served);
    },
  };

  /** The overlays' entries and the big maps' versions and counts (haproxy-shallow.ts). */
  async function shallow(): Promise<Result<string | null, PushFailure>> {
    const listing = await api.run("show map", "show map", (answer) => {
      const [routing, credentials] = [
        listed(answer, maps.routing),
        listed(answer, maps.credentials),
      ];
      return routing === undefined || credentials === undefined
        ? undefined
        : { routing, credentials };
    });
    if (!listing.ok) return listing;
    const routingOverlay = await shown(maps.routingOverlay, NO_SPACES, shownEntries);
    if (!routingOverlay.ok) return routingOverlay;
    if (!routingOverlay.value.has(REVISION_KEY)) return ok(null);
    const credentialsOverlay = await shown(maps.credentialsOverlay, SPACES, shownEntries);
    if (!credentialsOverlay.ok) return credentialsOverlay;
    const served = (await certificates?.heldDigest()) ?? ok("");
    if (!served.ok) return served;
    const read = shallowDigest({
      ...listing.value,
      routingOverlay: routingOverlay.value,
      credentialsOverlay: credentialsOverlay.value,
    });
    return ok(withCertificates(read, served.value));
  }

  /** What `read` makes of the answer to `show map <name>` (shown-map.ts), read as bytes. */
  async function shown<T>(
    name: string,
    rules: ShownMapRules,
    read: (answer: Buffer, rules: ShownMapRules) => T | undefined,
  ): Promise<Result<T, PushFailure>> {
    const answer = await runtimeAnswer(socket, `show map ${name}`, timeoutMs);
    if (!answer.ok) return answer;
    return readAs(name, answer.value, read(answer.value, rules));
  }

  /** The digest of `answer` to `show map <name>` under `overlay` (shown-map.ts). */
  async function digestOf(
    name: string,
    answer: Buffer,
    rules: ShownMapRules,
    overlay: ShownMapOverlay,
  ): Promise<Result<string | null, PushFailure>> {
    return readAs(name, answer, await shownMapDigest(answer, rules, overlay));
  }
}

const deepDigestOf = cachedPer((view: PushView) =>
  sha256(`${mapDigest(view)}\n${credentialsDigest(haproxyCredentials(view))}`),
);

/** `value` read from `answer` to `show map <name>`, or why there is none. */
function readAs<T>(name: string, answer: Buffer, value: T | undefined): Result<T, PushFailure> {
  if (value !== undefined) return ok(value);
  // HAProxy's words (the first line) unless they are an entry of a map, whose value may be an
  // App's credential: a message must never show one.
  const show = `show map ${name}`;
  const text = answer.toString("utf8").replace(/\n+$/, "");
  if (!/^0x[0-9a-f]+ /.test(text)) return rejected(show, text);
  return err({ reason: "protocol", message: `'${show}': a line is not an entry of a map` });
}

const NO_SPACES: ShownMapRules = { valueSpaces: false };
const SPACES: ShownMapRules = { valueSpaces: true };

/** The maps' digest, with the certificates' when there are any (none: the maps' alone, as before). */
const withCertificates = (maps: string, certificates: string) =>
  certificates === "" ? maps : sha256(`${maps}\n${certificates}`);
