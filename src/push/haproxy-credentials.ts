// The zero-hop credentials as HAProxy's second map (manifests/data-planes/haproxy/zero-hop):
// key the App's name, value its credential as HAProxy sets it as `Authorization`. The routing map
// only flags an App that has one (table-lines.ts `entryFields`), so a request for any other App
// never reads this map, and a rotation is one `set map` of one key here.
//
// The value is raw, not base64: a request then pays a lookup and the header's own copy, no
// decoding of up to 8 KiB. HAProxy keeps every byte a credential may hold (visible ASCII, space,
// tab) in both ways it is written: an `add map` payload line is the key, one space, and the rest
// of the line; a `set map` argument escapes space, tab, `\` and `;` with a `\`. Both drop leading
// spaces and tabs, which an HTTP receiver drops from a field value anyway (RFC 9110, 5.5), so they
// are left out here.

import type { RouteView } from "../snapshot/types.ts";
import {
  type CredentialFormat,
  type CredentialLine,
  type CredentialLines,
  credentialLines,
} from "./credential-lines.ts";
import { argument } from "./haproxy-commands.ts";
import { addSum, chunkSum, noLines, sumText } from "./line-sum.ts";

/** Where the zero-hop haproxy.cfg reads the credentials map: beside the routing map, shipped empty. */
export const DEFAULT_HAPROXY_CREDENTIALS_MAP =
  "/usr/local/etc/haproxy/replica-mirror-credentials.map";

/** A credential as the map holds it: without leading spaces and tabs (see above). */
const mapValue: CredentialFormat = (credential) => credential.replace(/^[ \t]+/, "");

/** `view`'s credentials map per App chunk; the same list for a chunk that Snapshots share. */
export const haproxyCredentials = (view: RouteView): CredentialLines =>
  credentialLines(view, mapValue);

/** Each chunk's lines as one `add map` payload piece (`payloads` in haproxy-map.ts cuts them). */
export function* credentialPieces(lines: CredentialLines): Generator<string> {
  for (const chunk of lines) {
    if (chunk.length > 0) yield `${chunk.map((l) => `${l.app} ${l.value}`).join("\n")}\n`;
  }
}

/**
 * The runtime API command that writes one App's credential into the current version of `map`:
 * `set map` for a key the map holds (one entry's value swapped under HAProxy's lock: a request
 * reads the old value or the new one, whole), `add map` for one it does not. Holds Secret bytes:
 * never log it (haproxy-runtime.ts names only its first words).
 */
export function credentialCommand(map: string, line: CredentialLine, held: boolean): string {
  return `${held ? "set" : "add"} map ${map} ${line.app} ${argument(line.value)}`;
}

/**
 * The digest of the credentials HAProxy holds while it holds exactly `lines`: the order-free sum
 * of their `key value` lines (line-sum.ts), as `shownMapDigest` (shown-map.ts) reads the map back
 * under its overlay. Each chunk's lines are summed once.
 */
export function credentialsDigest(lines: CredentialLines): string {
  const sum = noLines();
  for (const chunk of lines)
    addSum(
      sum,
      chunkSum(chunk, (l) => `${l.app} ${l.value}`),
    );
  return sumText(sum);
}
