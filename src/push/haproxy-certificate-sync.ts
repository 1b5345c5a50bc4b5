// Keeps HAProxy's runtime-added certificates (haproxy-certificates.ts) equal to a view's, through
// the runtime API, a connection for one command or two joined by `;`, every answer checked:
//   new ssl cert <name>;                   a store entry (skipped when HAProxy holds the name),
//   set ssl cert <name> <<\n<chain+key>\n   then the payload: opens HAProxy's one transaction
//   commit ssl cert <name>;                or, on any failure after the set, abort ssl cert <name>
//   add ssl crt-list <crt-list> <<\n<name> <SNI filters>\n
// then, once every new line is in, for each line the view no longer has:
//   del ssl crt-list <crt-list> <name>     the name's line
//   del ssl cert <name>                    the store entry, unused once its line is gone
// so a rotation is the new certificate's two connections then two deletions, and a name is never
// without a line. HAProxy keeps one open transaction, and a `set ssl cert` of another name while
// one is open lands in the open one: the pusher never overlaps calls, and the answer to `set`
// must name the certificate set, or that transaction (which now holds the key) is aborted and the
// push fails. A whole push (the first, after a failure, a restart, drift) reads what HAProxy holds
// (`show ssl crt-list`, `show ssl cert`, each line's certificate fingerprint) instead of trusting
// what was pushed, and sets each certificate it does not hold as pushed: a restarted HAProxy
// gets every one, a tampered one is replaced in place, and one push failed under load costs the
// reading (about 25 ms at 1,000 certificates), not 1,000 certificates set again.

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { PushView } from "../snapshot/types.ts";
import {
  addLineCommand,
  type CrtListLine,
  certificatePrefix,
  certificatesDigest,
  crtListLines,
  expectedCertificates,
  fingerprintOf,
  parseCrtList,
  parseFingerprints,
  parseStore,
  setCertificateCommand,
  UNKNOWN_CRT_LIST,
} from "./haproxy-certificates.ts";
import { batched } from "./haproxy-commands.ts";
import { runtimeCommand } from "./haproxy-runtime.ts";
import type { PushFailure } from "./target.ts";

export interface CertificateSyncOptions {
  /** The stats socket. */
  readonly socket: string;
  /** The crt-list exactly as haproxy.cfg's `bind ... ssl crt-list` names it. */
  readonly crtList: string;
  readonly timeoutMs: number;
}

/** The sidecar's certificates in one HAProxy. Calls never overlap. */
export interface CertificateSync {
  /**
   * Makes HAProxy serve exactly `view`'s certificate lines; `whole`: read what it holds rather
   * than trust the last push, and set every certificate again. No command at all for a view
   * without certificates after a push that held none.
   */
  push(view: PushView, whole: boolean): Promise<Result<void, PushFailure>>;
  /** The digest of the lines HAProxy holds under the sidecar's prefix and their certificates. */
  heldDigest(): Promise<Result<string, PushFailure>>;
  /** The digest `heldDigest` gives while HAProxy holds exactly `view`'s lines; "" for none. */
  digestOf(view: PushView): string;
}

/**
 * What HAProxy holds of the sidecar's: crt-list lines by name, the store's names, and, when read
 * from HAProxy (not trusted from the last push), each line's certificate fingerprint.
 */
interface Holding {
  readonly lines: Map<string, string>;
  readonly store: Set<string>;
  readonly fingerprints: ReadonlyMap<string, string> | null;
}

/** The certificate sync of the crt-list `options.crtList`. */
export function haproxyCertificateSync(options: CertificateSyncOptions): CertificateSync {
  const { socket, crtList, timeoutMs } = options;
  const prefix = certificatePrefix(crtList);
  const linesOf = crtListLines(crtList);

  /** Runs `command`; its answer when `accept` takes it, else a rejection naming `what`. */
  async function run(
    command: string,
    what: string,
    accept: (answer: string) => boolean,
  ): Promise<Result<string, PushFailure>> {
    const answer = await runtimeCommand(socket, command, timeoutMs);
    if (!answer.ok || accept(answer.value)) return answer;
    return rejected(what, answer.value);
  }

  /** The lines of the crt-list under the prefix, by name; none when HAProxy knows no such list. */
  async function readLines(): Promise<Result<Map<string, string>, PushFailure>> {
    const show = `show ssl crt-list ${crtList}`;
    const answer = await runtimeCommand(socket, show, timeoutMs);
    if (!answer.ok) return answer;
    if (answer.value === UNKNOWN_CRT_LIST) return ok(new Map());
    const lines = parseCrtList(answer.value, prefix);
    if (lines === undefined) return rejected(show, answer.value);
    return ok(new Map(lines.map((l) => [l.split(" ", 1)[0]!, l])));
  }

  async function readHolding(): Promise<Result<Holding, PushFailure>> {
    const lines = await readLines();
    if (!lines.ok) return lines;
    const store = await run("show ssl cert", "show ssl cert", (a) => a.startsWith("#"));
    if (!store.ok) return store;
    const { names, transaction } = parseStore(store.value, prefix);
    // One of the sidecar's left open (a push that timed out): it would take the next `set`.
    if (transaction?.startsWith(prefix)) {
      const aborted = await abort(transaction);
      if (!aborted.ok) return aborted;
    }
    const fingerprints = await readFingerprints([...lines.value.keys()]);
    if (!fingerprints.ok) return fingerprints;
    return ok({ lines: lines.value, store: new Set(names), fingerprints: fingerprints.value });
  }

  /** The SHA-1 fingerprint of each named certificate HAProxy holds, `;`-batched. */
  async function readFingerprints(
    names: readonly string[],
  ): Promise<Result<Map<string, string>, PushFailure>> {
    const found = new Map<string, string>();
    for (const command of batched("show ssl cert", names)) {
      const answer = await runtimeCommand(socket, command, timeoutMs);
      if (!answer.ok) return answer;
      for (const [name, fingerprint] of parseFingerprints(answer.value))
        found.set(name, fingerprint);
    }
    return ok(found);
  }

  const abort = (name: string) =>
    run(`abort ssl cert ${name}`, `abort ssl cert ${name}`, (a) =>
      a.startsWith("Transaction aborted"),
    );

  /**
   * The certificate of `line` into the store, committed, and with `add` its line into the
   * crt-list: new (unless held) and set on one connection, commit and add on another (`;`: two
   * connections a certificate, not four; an add after a failed commit finds the new name empty
   * and is refused).
   */
  async function load(
    line: CrtListLine,
    inStore: boolean,
    add: boolean,
  ): Promise<Result<void, PushFailure>> {
    const { name } = line;
    // A `new` refused (the name held after all) leaves the `set` to say whether the name is usable.
    const create = inStore ? "" : `new ssl cert ${name};`;
    const set = await runtimeCommand(socket, `${create}${setCertificateCommand(line)}`, timeoutMs);
    const last = set.ok ? (set.value.split("\n\n").at(-1) ?? "") : "";
    const opened = /^Transaction (?:created|updated) for certificate (.+)!$/.exec(last);
    if (!set.ok || opened?.[1] !== name) {
      // The payload may sit in whichever transaction is open: abort it (the error said why).
      const open = opened?.[1] ?? name;
      await abort(open);
      if (!set.ok) return set;
      return opened === null
        ? rejected(`set ssl cert ${name}`, last)
        : err({
            reason: "rejected",
            message: `'set ssl cert ${name}': the payload went to the open transaction of ${open}, aborted`,
          });
    }
    const commit = `commit ssl cert ${name}${add ? `;${addLineCommand(crtList, line)}` : ""}`;
    const answer = await runtimeCommand(socket, commit, timeoutMs);
    if (!answer.ok) {
      await abort(name);
      return answer;
    }
    const [committed = "", ...rest] = answer.value.split("\n\n");
    if (!committed.startsWith("Committing") || !committed.endsWith("Success!")) {
      await abort(name);
      return rejected(`commit ssl cert ${name}`, committed);
    }
    const inserted = rest.at(-1) ?? "";
    if (add && !(inserted.startsWith("Inserting") && inserted.endsWith("Success!")))
      return rejected(`add ssl crt-list ${crtList} ${name}`, inserted);
    return ok(undefined);
  }

  const delLine = (name: string) =>
    run(`del ssl crt-list ${crtList} ${name}`, `del ssl crt-list ${crtList} ${name}`, (a) =>
      a.startsWith(`Entry '${name}' deleted`),
    );
  const delCertificate = (name: string) =>
    run(
      `del ssl cert ${name}`,
      `del ssl cert ${name}`,
      (a) => a === `Certificate '${name}' deleted!`,
    );

  // What HAProxy holds as last pushed; null when unknown: the next push reads it.
  let held: Holding | null = null;

  async function sync(
    desired: readonly CrtListLine[],
    from: Holding | null,
  ): Promise<Result<void, PushFailure>> {
    let holding = from;
    if (holding === null) {
      const read = await readHolding();
      if (!read.ok) return read;
      holding = read.value;
    }
    const { lines, store, fingerprints } = holding;
    for (const line of desired) {
      const shown = lines.get(line.name);
      if (from !== null && shown !== undefined) continue;
      // Read from HAProxy: held as pushed, line and certificate alike.
      if (shown === line.line && fingerprints?.get(line.name) === fingerprintOf(line.certificate))
        continue;
      // Tampered filters: the line goes, then comes back as pushed.
      if (shown !== undefined && shown !== line.line) {
        const deleted = await delLine(line.name);
        if (!deleted.ok) return deleted;
        lines.delete(line.name);
      }
      const loaded = await load(line, store.has(line.name), shown !== line.line);
      if (!loaded.ok) return loaded;
      store.add(line.name);
      lines.set(line.name, line.line);
    }
    const wanted = new Set(desired.map((l) => l.name));
    for (const name of [...lines.keys()].filter((n) => !wanted.has(n))) {
      const deleted = await delLine(name);
      if (!deleted.ok) return deleted;
      lines.delete(name);
    }
    for (const name of [...store].filter((n) => !wanted.has(n))) {
      const deleted = await delCertificate(name);
      if (!deleted.ok) return deleted;
      store.delete(name);
    }
    return ok(undefined);
  }

  return {
    async push(view, whole) {
      const desired = linesOf(view);
      const from = whole ? null : held;
      held = null;
      if (from !== null && desired.length === 0 && from.store.size === 0) {
        held = from;
        return ok(undefined);
      }
      const copy = from && {
        lines: new Map(from.lines),
        store: new Set(from.store),
        fingerprints: null,
      };
      const synced = await sync(desired, copy);
      if (!synced.ok) return synced;
      const lines = new Map(desired.map((l) => [l.name, l.line]));
      held = { lines, store: new Set(lines.keys()), fingerprints: null };
      return synced;
    },
    async heldDigest() {
      const lines = await readLines();
      if (!lines.ok) return lines;
      const read = await readFingerprints([...lines.value.keys()]);
      if (!read.ok) return read;
      const found = read.value;
      const held = [...lines.value].map(([name, line]) => ({
        line,
        fingerprint: found.get(name) ?? "none",
      }));
      return ok(certificatesDigest(held));
    },
    digestOf: cachedPer((view: PushView) =>
      certificatesDigest(expectedCertificates(linesOf(view))),
    ),
  };
}

/** HAProxy's refusal, its first line only: the runtime API never echoes a payload back. */
function rejected(command: string, answer: string): Result<never, PushFailure> {
  const first = answer.trim().split("\n", 1)[0] ?? "";
  return err({
    reason: "rejected",
    message: `'${command}': ${first.slice(0, 200) || "empty answer"}`,
  });
}
