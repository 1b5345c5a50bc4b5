// HAProxy's runtime API as the push target speaks it: a command, its answer checked, HAProxy's
// refusal as a PushFailure naming the command (never a payload or a value, which may hold an
// App's credential), and one map replaced whole as one version (prepare, add, commit).

import { err, ok, type Result } from "../result.ts";
import { entryCount } from "./haproxy-map.ts";
import { runtimeCommand } from "./haproxy-runtime.ts";
import type { PushFailure } from "./target.ts";

/** Runs commands on one stats socket. */
export interface RuntimeApi {
  /**
   * Runs `command`: what `read` makes of its answer (trimmed), or a rejection naming `what`
   * (what a message may show of the command) when `read` gives undefined. Never rejects.
   */
  run<T>(
    command: string,
    what: string,
    read: (answer: string) => T | undefined,
  ): Promise<Result<T, PushFailure>>;
}

/** The runtime API at `socket`, each command given `timeoutMs`. */
export function runtimeApi(socket: string, timeoutMs: number): RuntimeApi {
  return {
    async run(command, what, read) {
      const answer = await runtimeCommand(socket, command, timeoutMs);
      if (!answer.ok) return answer;
      const value = read(answer.value);
      return value === undefined ? rejected(what, answer.value) : ok(value);
    },
  };
}

/**
 * A command that succeeded says nothing; so do commands joined by `;` that all succeeded (each
 * answers an empty line; one that failed its words, and the ones after it still run).
 */
export const silent = (answer: string): string | undefined => (answer === "" ? answer : undefined);

/** HAProxy's refusal, its first line only (the runtime API answers errors in one line). */
export function rejected(command: string, answer: string): Result<never, PushFailure> {
  const first = answer.trim().split("\n", 1)[0] ?? "";
  return err({
    reason: "rejected",
    message: `'${command}': ${first.slice(0, 200) || "empty answer"}`,
  });
}

const NEW_VERSION = /^New version created: (\d+)$/;

/** The maps of the zero-hop haproxy.cfg, exactly as it names them, and their overlays (ADR 60). */
export interface MapNames {
  readonly routing: string;
  readonly credentials: string;
  readonly routingOverlay: string;
  readonly credentialsOverlay: string;
}

/** `entry_cnt` in `show map` (every version's entries) of the map replaced and of the credentials. */
interface Counts {
  readonly replaced: number;
  readonly credentials: number;
}

/**
 * Replaces map `name` (one of `maps`) whole with one version of `content` (`lines` entries, in
 * `add map` payloads); before the commit, the credentials map must hold `credentials` entries
 * unless null (a restart since the credentials were written would show there). A failure before
 * the commit leaves the current version as it was; HAProxy drops the uncommitted one at the next
 * commit. Gives the version committed, as `show map` lists it (`curr_ver`).
 */
export async function replaceVersioned(
  api: RuntimeApi,
  maps: MapNames,
  name: string,
  content: Iterable<string>,
  lines: number,
  credentials: number | null,
): Promise<Result<string, PushFailure>> {
  const entries = () =>
    api.run("show map", "show map", (a): Counts | undefined => {
      const replaced = entryCount(a, name);
      const held = entryCount(a, maps.credentials);
      return replaced === undefined || held === undefined
        ? undefined
        : { replaced, credentials: held };
    });
  const prepare = `prepare map ${name}`;
  const version = await api.run(prepare, prepare, (a) => NEW_VERSION.exec(a)?.[1]);
  if (!version.ok) return version;
  const before = await entries();
  if (!before.ok) return before;
  const add = `add map @${version.value} ${name}`;
  // One after another: HAProxy takes a payload in one buffer (tune.bufsize), and runs the
  // commands of one map in turn anyway.
  for (const payload of content) {
    const added = await api.run(`${add} <<\n${payload}\n`, add, silent);
    if (!added.ok) return added;
  }
  // A payload HAProxy could not take closes the connection with no answer, as a success does:
  // the count of entries (every version's) tells them apart before the commit.
  const after = await entries();
  if (!after.ok) return after;
  const taken = after.value.replaced - before.value.replaced;
  if (taken !== lines) {
    return err({ reason: "rejected", message: `'${add}': ${taken} of ${lines} entries taken` });
  }
  if (credentials !== null && after.value.credentials !== credentials) {
    const message = `'${add}': the credentials map holds ${after.value.credentials} entries, not ${credentials}`;
    return err({ reason: "rejected", message });
  }
  const commit = `commit map @${version.value} ${name}`;
  const committed = await api.run(commit, commit, silent);
  return committed.ok ? ok(version.value) : committed;
}

/** Commands of the form `<verb> <name>`, joined by `;` on lines of at most `bytes`. */
export function batched(verb: string, names: readonly string[], bytes = 8_000): string[] {
  const out: string[] = [];
  let current = "";
  for (const name of names) {
    const command = `${verb} ${name}`;
    if (current !== "" && current.length + command.length + 1 > bytes) {
      out.push(current);
      current = "";
    }
    current = current === "" ? command : `${current};${command}`;
  }
  if (current !== "") out.push(current);
  return out;
}

/**
 * `value` as one argument of a command line: space, tab, `\` and `;` (which would end the
 * argument or the command) escaped with a `\`, as HAProxy's command parser reads them.
 */
export const argument = (value: string): string => value.replace(/[ \t\\;]/g, "\\$&");
