/**
 * The seeded generator: seed → an endless, stable stream of operations, of which a run takes the
 * first `steps`. Taking fewer steps gives a prefix of the same stream, so `--steps K` replays
 * exactly the prefix a shrink printed. Every operation is a concrete value: replaying a prefix
 * does not depend on what the cluster holds.
 */

import { type Random, seeded } from "../support/random.ts";
import { REGISTRY_NAME } from "../support/world.ts";
import type { AppDef } from "./model.ts";
import type { BadRegistry, Op } from "./ops.ts";
import { APP_NAMES, APP_SECRETS, editRegistry, randomApp, shuffle } from "./registry-edits.ts";

/** Secrets no App ever references; one has the Registry's name in another namespace. */
const NOISE_SECRETS: readonly { namespace: string; name: string }[] = [
  { namespace: "tenant-a", name: "noise-1" },
  { namespace: "tenant-b", name: "noise-2" },
  { namespace: "platform", name: "noise-3" },
  { namespace: "kube-system", name: "noise-4" },
  { namespace: "tenant-a", name: REGISTRY_NAME },
];

const BAD: readonly BadRegistry[] = [
  "not-json",
  "port",
  "duplicate-name",
  "wrong-type",
  "no-hostnames",
  "api-version",
  "bad-secret-key",
  "key-missing",
  "bad-gzip",
];

/**
 * `data` with some values spelled as a file an editor wrote (a trailing line break, which a
 * credential drops), or broken as a header value: drawn from `c` alone, as credentials are.
 */
function spelled(c: Random, data: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    const roll = c.next();
    out[k] =
      v === "" || roll >= 0.3
        ? v
        : roll < 0.12
          ? `${v}\n`
          : roll < 0.18
            ? `${v}\r\n`
            : roll < 0.24
              ? "\n"
              : `${v.slice(0, 2)}\u0001${v.slice(2)}`;
  }
  return out;
}

function secretData(r: Random): Record<string, string> {
  const word = () => `v${r.int(1_000_000)}`;
  switch (r.int(6)) {
    case 0:
      return { token: "" }; // emptied
    case 1:
      return { other: word() }; // the key removed
    case 2:
      return { token: word(), alt: word() };
    case 3:
      return { alt: word() };
    default:
      return { token: word() };
  }
}

/** The generator's own view of the cluster: only what choosing the next operation needs. */
class Shadow {
  apps: AppDef[] = [];
  readonly present = new Set<string>();
}

/** The operations a macro of this seed expands to: world writes and faults interleaved. */
class Stream {
  readonly #r: Random;
  /** Credentials only: a stream apart, so that every other draw of a seed stays as it was. */
  readonly #c: Random;
  /** Replica restarts only, apart for the same reason: they add operations, change none. */
  readonly #k: Random;
  readonly #s = new Shadow();
  readonly #queue: Op[] = [];
  #untilQuiesce: number;

  constructor(seed: number) {
    this.#r = seeded(seed);
    this.#c = seeded(seed + 0x5eed_c0de);
    this.#k = seeded(seed + 0x7e57_a7ed);
    this.#untilQuiesce = this.#r.between(3, 9);
  }

  /** The first operations every run starts from: a Registry and some of its Secrets. */
  initial(): Op[] {
    const r = this.#r;
    const apps = shuffle(r, APP_NAMES)
      .slice(0, r.between(2, 4))
      .map((n) => randomApp(r, this.#c, n));
    this.#s.apps = apps;
    const ops: Op[] = [];
    for (const ref of APP_SECRETS) if (r.chance(0.7)) ops.push(this.#secret(ref));
    ops.push({ op: "registry", apps, gzip: false });
    return ops;
  }

  next(): Op {
    while (this.#queue.length === 0) this.#fill();
    return this.#queue.shift()!;
  }

  #fill(): void {
    if (this.#untilQuiesce <= 0) {
      this.#untilQuiesce = this.#r.between(3, 9);
      this.#queue.push({ op: "quiesce" });
      return;
    }
    this.#untilQuiesce -= 1;
    if (this.#k.chance(0.08)) this.#queue.push(this.#replicaRestart());
    if (this.#r.chance(0.55)) this.#queue.push(...this.#worldOps());
    else this.#queue.push(...this.#faultOps());
  }

  /** Sidecar b, stopped or crashed, back after a while: drawn from `#k` alone. */
  #replicaRestart(): Op {
    const k = this.#k;
    return {
      op: "replica-restart",
      sidecar: "b",
      downMs: k.pick([0, 150, 600]),
      crash: k.chance(0.5),
    };
  }

  /** Now and then a restart beside a refused Registry value. */
  #restartBeside(): Op[] {
    return this.#k.chance(0.3) ? [this.#replicaRestart()] : [];
  }

  #gap(): Op[] {
    const r = this.#r;
    return r.chance(0.35) ? [{ op: "wait", ms: r.pick([5, 20, 60, 150, 300]) }] : [];
  }

  #secret(ref: { namespace: string; name: string }): Op {
    this.#s.present.add(`${ref.namespace}/${ref.name}`);
    return { op: "secret", ...ref, data: spelled(this.#c, secretData(this.#r)) };
  }

  #deleteSecret(ref: { namespace: string; name: string }): Op {
    this.#s.present.delete(`${ref.namespace}/${ref.name}`);
    return { op: "secret-delete", ...ref };
  }

  /** A referenced Secret, mostly one the current Registry uses. */
  #appSecret(): { namespace: string; name: string } {
    const r = this.#r;
    const used = this.#s.apps.map((a) => ({
      namespace: a.secret.namespace ?? "platform",
      name: a.secret.name,
    }));
    return used.length > 0 && r.chance(0.7) ? r.pick(used) : r.pick(APP_SECRETS);
  }

  #registry(): Op {
    const r = this.#r;
    this.#s.apps = editRegistry(r, this.#c, this.#s.apps);
    return { op: "registry", apps: this.#s.apps, gzip: r.chance(0.25) };
  }

  #worldOps(allowQuiesce = true): Op[] {
    const r = this.#r;
    const k = r.int(100);
    if (k < 30) return [this.#registry(), ...this.#gap()];
    if (k < 55) return [this.#secret(this.#appSecret()), ...this.#gap()];
    if (k < 65) return [this.#deleteSecret(this.#appSecret()), ...this.#gap()];
    if (k < 73) {
      // deleted and recreated, sometimes faster than a watch delivers
      const ref = this.#appSecret();
      return [this.#deleteSecret(ref), ...this.#gap(), this.#secret(ref), ...this.#gap()];
    }
    if (k < 83) {
      const ref = r.pick(NOISE_SECRETS);
      return [r.chance(0.7) ? this.#secret(ref) : this.#deleteSecret(ref), ...this.#gap()];
    }
    if (k < 88) return [{ op: "registry-delete" }, ...this.#gap(), this.#registry()];
    // a malformed Registry, then the fix (a quiescent point may fall between them); the replica
    // with a state file sometimes restarts in between, beside the refused value (ADR 91)
    const bad: Op = { op: "registry-bad", variant: r.pick(BAD), apps: this.#s.apps };
    const beside = this.#restartBeside();
    if (allowQuiesce && r.chance(0.3)) {
      this.#untilQuiesce = r.between(3, 9);
      return [bad, ...this.#gap(), { op: "quiesce" }, ...beside, this.#registry(), ...this.#gap()];
    }
    return [bad, ...this.#gap(), ...beside, this.#registry(), ...this.#gap()];
  }

  #faultOps(): Op[] {
    const r = this.#r;
    const world = () => (r.chance(0.7) ? this.#worldOps(false) : []);
    switch (r.int(11)) {
      case 0:
        return [{ op: "drop-watches" }, ...world()];
      case 1:
        return [{ op: "end-watches" }, ...world()];
      case 2:
        // a stall longer than the watch timeout, with writes held by it
        return [
          { op: "stall", on: true },
          ...world(),
          ...world(),
          { op: "wait", ms: r.between(1200, 3200) },
          { op: "stall", on: false },
        ];
      case 3:
        // compaction with deletions while disconnected: the resume gets 410 and must relist
        return [
          { op: "stall", on: true },
          this.#deleteSecret(this.#appSecret()),
          ...world(),
          { op: "compact" },
          { op: "drop-watches" },
          ...this.#gap(),
          { op: "stall", on: false },
        ];
      case 4:
        // failing lists: 500s, then 429 with Retry-After; a compaction forces the relists
        return [
          { op: "fail", verb: "list", count: r.between(1, 3), status: 500 },
          { op: "fail", verb: "list", count: 1, status: 429, retryAfterSeconds: 1 },
          ...world(),
          { op: "compact" },
          { op: "drop-watches" },
          ...world(),
        ];
      case 5:
        return [
          {
            op: "fail",
            verb: "watch",
            count: r.between(1, 4),
            status: r.pick([500, 429] as const),
            ...(r.chance(0.5) ? { retryAfterSeconds: 1 } : {}),
          },
          { op: "end-watches" },
          ...world(),
        ];
      case 6:
        return [
          { op: "chunking", mode: r.pick(["split", "coalesce"] as const), seed: r.int(1000) },
          ...world(),
          ...world(),
        ];
      case 7:
        return [
          { op: "garbage", kind: r.pick(["bytes", "truncated", "non-json"] as const) },
          ...world(),
        ];
      case 8:
        return [{ op: "latency", ms: r.pick([20, 80, 250]) }, ...world(), ...world()];
      case 9:
        // an API-server restart on the same port, with the same state
        return [...world(), { op: "restart", downMs: r.between(200, 1500) }, ...world()];
      default:
        // bookmarks move the resume point; then compaction and a drop
        return [{ op: "wait", ms: r.between(300, 700) }, { op: "compact" }, { op: "drop-watches" }];
    }
  }
}

/** The first `steps` operations of this seed's stream (after its fixed initial writes). */
export function generate(seed: number, steps: number): { initial: Op[]; ops: Op[] } {
  const stream = new Stream(seed);
  const initial = stream.initial();
  const ops = Array.from({ length: steps }, () => stream.next());
  return { initial, ops };
}
