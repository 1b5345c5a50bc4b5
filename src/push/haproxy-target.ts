// The zero-hop table pushed into HAProxy: one map version per push, filled in payloads that fit
// the runtime API's buffer, then committed, so requests see the old table or the new one and
// never a mix. A failure before the commit leaves the old table in place; the uncommitted
// version is dropped by HAProxy at the next commit.

import { err, ok, type Result } from "../result.ts";
import { mapLines, parseHeldRevision, payloads, REVISION_KEY } from "./haproxy-map.ts";
import { openRuntimeSession, type RuntimeAddress, type RuntimeSession } from "./haproxy-runtime.ts";
import type { RoutingTable } from "./table.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface HaproxyTargetOptions {
  readonly name?: string;
  /** The stats socket (`stats socket ... level admin`). */
  readonly socket: RuntimeAddress;
  /** The map file exactly as haproxy.cfg names it in `map_str(...)`. */
  readonly map: string;
  /** Per command; a push of 10k Apps is about 70 commands. */
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
  /** Runs `use` over one session, closed afterwards whatever happens. */
  async function session<T>(
    use: (s: RuntimeSession) => Promise<Result<T, PushFailure>>,
  ): Promise<Result<T, PushFailure>> {
    const opened = await openRuntimeSession(socket, timeoutMs);
    if (!opened.ok) return opened;
    try {
      return await use(opened.value);
    } finally {
      opened.value.close();
    }
  }

  return {
    name: options.name ?? "haproxy",
    push: (table: RoutingTable) =>
      session(async (s): Promise<Result<void, PushFailure>> => {
        const prepared = await s.command(`prepare map ${map}`);
        if (!prepared.ok) return prepared;
        const version = NEW_VERSION.exec(prepared.value)?.[1];
        if (version === undefined) return rejected(`prepare map ${map}`, prepared.value);
        const adds = payloads(mapLines(table), payloadBytes).map(
          (payload) => `add map @${version} ${map} <<\n${payload}\n`,
        );
        const added = await s.pipeline(adds);
        if (!added.ok) return added;
        const refusal = added.value.find((answer) => answer !== "");
        if (refusal !== undefined) return rejected(`add map @${version} ${map}`, refusal);
        const committed = await s.command(`commit map @${version} ${map}`);
        if (!committed.ok) return committed;
        if (committed.value !== "")
          return rejected(`commit map @${version} ${map}`, committed.value);
        return ok(undefined);
      }),
    held: () =>
      session(async (s): Promise<Result<number | null, PushFailure>> => {
        const answer = await s.command(`get map ${map} ${REVISION_KEY}`);
        if (!answer.ok) return answer;
        const revision = parseHeldRevision(answer.value);
        if (revision === undefined) return rejected(`get map ${map}`, answer.value);
        return ok(revision);
      }),
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
