// The zero-hop table pushed into HAProxy: one map version per push, filled in payloads that fit
// the runtime API's buffer, then committed, so requests see the old table or the new one and
// never a mix. A failure before the commit leaves the old table in place; the uncommitted
// version is dropped by HAProxy at the next commit. A verification reads the whole map back.

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import {
  entryCount,
  mapDigest,
  mapPayloads,
  parseHeldRevision,
  REVISION_KEY,
  shownMapDigest,
} from "./haproxy-map.ts";
import { runtimeCommand } from "./haproxy-runtime.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface HaproxyTargetOptions {
  readonly name?: string;
  /** The path of the stats socket (`stats socket <path> mode 600 level admin`). */
  readonly socket: string;
  /** The map file exactly as haproxy.cfg names it in `map_str(...)`. */
  readonly map: string;
  /** Per command; a push of 10k Apps is about 45 commands, one connection each. */
  readonly timeoutMs?: number;
  /** Bytes of payload per `add map` command; HAProxy's default tune.bufsize is 16384. */
  readonly payloadBytes?: number;
}

/** Where the zero-hop haproxy.cfg (manifests/data-planes/haproxy/zero-hop) reads its map. */
export const DEFAULT_HAPROXY_MAP = "/usr/local/etc/haproxy/replica-mirror.map";

const NEW_VERSION = /^New version created: (\d+)$/;

/** A PushTarget for HAProxy 2.6+ over its runtime API, with the zero-hop haproxy.cfg. */
export function haproxyTarget(options: HaproxyTargetOptions): PushTarget {
  const { socket, map } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const payloadBytes = options.payloadBytes ?? 12_000;
  /** Runs `command`: what `read` makes of its answer, or a rejection naming `what`. */
  async function run<T>(
    command: string,
    what: string,
    read: (answer: string) => T | undefined,
  ): Promise<Result<T, PushFailure>> {
    const answer = await runtimeCommand(socket, command, timeoutMs);
    if (!answer.ok) return answer;
    const value = read(answer.value);
    return value === undefined ? rejected(what, answer.value) : ok(value);
  }
  /** A command that succeeded says nothing. */
  const silent = (answer: string) => (answer === "" ? answer : undefined);
  /** The map's entries in all its versions, from `show map`'s line for it. */
  const entries = () => run("show map", "show map", (a) => entryCount(a, map));

  return {
    name: options.name ?? "haproxy",
    async push(view: RouteView): Promise<Result<void, PushFailure>> {
      const content = mapPayloads(view, payloadBytes);
      const prepare = `prepare map ${map}`;
      const version = await run(prepare, prepare, (a) => NEW_VERSION.exec(a)?.[1]);
      if (!version.ok) return version;
      const before = await entries();
      if (!before.ok) return before;
      const add = `add map @${version.value} ${map}`;
      // One after another: HAProxy takes a payload in one buffer (tune.bufsize), and runs the
      // commands of one map in turn anyway.
      for (const payload of content.payloads) {
        const added = await run(`${add} <<\n${payload}\n`, add, silent);
        if (!added.ok) return added;
      }
      // A payload HAProxy could not take closes the connection with no answer, as a success
      // does: the count of entries (every version's) tells them apart before the commit.
      const after = await entries();
      if (!after.ok) return after;
      if (after.value !== before.value + content.lines) {
        const message = `'${add}': ${after.value - before.value} of ${content.lines} entries taken`;
        return err({ reason: "rejected", message });
      }
      const commit = `commit map @${version.value} ${map}`;
      const committed = await run(commit, commit, silent);
      return committed.ok ? ok(undefined) : committed;
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const get = `get map ${map} ${REVISION_KEY}`;
      return run(get, `get map ${map}`, parseHeldRevision);
    },
    // Every entry of the current version (600 kB at 10k Apps): HAProxy cannot hash its map.
    async heldDigest(): Promise<Result<string | null, PushFailure>> {
      const show = `show map ${map}`;
      const answer = await runtimeCommand(socket, show, timeoutMs);
      if (!answer.ok) return answer;
      const digest = shownMapDigest(answer.value);
      if (digest !== undefined) return ok(digest);
      // HAProxy's words (the first line) unless they are an entry of the map, whose value may
      // hold an App's credential: a message must never show one.
      if (!/^0x[0-9a-f]+ /.test(answer.value)) return rejected(show, answer.value);
      return err({ reason: "protocol", message: `'${show}': a line is not an entry of a map` });
    },
    digestOf: cachedPer(mapDigest),
  };
}

/** HAProxy's refusal, its first line only (the runtime API answers errors in one line). */
function rejected(command: string, answer: string): Result<never, PushFailure> {
  const first = answer.trim().split("\n", 1)[0] ?? "";
  return err({
    reason: "rejected",
    message: `'${command}': ${first.slice(0, 200) || "empty answer"}`,
  });
}
