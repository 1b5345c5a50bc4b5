/**
 * The seeded generator: seed → an endless, stable stream of operations, of which a run takes the
 * first `steps`. Taking fewer steps gives a prefix of the same stream, so `--steps K` replays
 * exactly the prefix a shrink printed. Every operation is a concrete value: replaying a prefix
 * does not depend on what the cluster holds.
 */

import { type Random, seeded } from "../support/random.ts";
import { REGISTRY_NAME } from "../support/world.ts";
import { EXACT, WILDCARDS } from "./hosts.ts";
import type { AppDef } from "./model.ts";
import type { BadRegistry, Op } from "./ops.ts";

const APP_NAMES = ["aaa", "api", "blog", "edge", "shop", "zed"];

/** Referenced Secrets. tenant-c lies outside the namespaces one sidecar watches. */
const APP_SECRETS: readonly { namespace: string; name: string }[] = [
  { namespace: "tenant-a", name: "shop-credentials" },
  { namespace: "tenant-a", name: "shared" },
  { namespace: "tenant-b", name: "blog-credentials" },
  { namespace: "tenant-b", name: "shared" },
  { namespace: "platform", name: "edge-credentials" },
  { namespace: "tenant-c", name: "zed-credentials" },
];

/** Secrets no App ever references; one has the Registry's name in another namespace. */
const NOISE_SECRETS: readonly { namespace: string; name: string }[] = [
  { namespace: "tenant-a", name: "noise-1" },
  { namespace: "tenant-b", name: "noise-2" },
  { namespace: "platform", name: "noise-3" },
  { namespace: "kube-system", name: "noise-4" },
  { namespace: "tenant-a", name: REGISTRY_NAME },
];

const UPSTREAMS = [
  "http://shop.tenant-a.svc:8080",
  "http://blog.tenant-b.svc",
  "https://api:443/v1",
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

/** A declared hostname as a leader might spell it: random case, sometimes a trailing dot. */
function spell(r: Random, pattern: string): string {
  let out = "";
  for (const c of pattern) out += r.chance(0.15) ? c.toUpperCase() : c;
  return r.chance(0.15) ? `${out}.` : out;
}

function canonicalOf(written: string): string {
  return (written.endsWith(".") ? written.slice(0, -1) : written).toLowerCase();
}

/** A credential or none, drawn from `c` alone: the other draws of a seed stay as they were. */
function randomCredential(c: Random): AppDef["credential"] {
  return c.chance(0.35) ? { prefix: c.chance(0.5) ? "Bearer " : "" } : null;
}

function randomApp(r: Random, c: Random, name: string): AppDef {
  const hostnames = Array.from({ length: r.between(1, 3) }, () =>
    spell(r, r.chance(0.65) ? r.pick(EXACT) : r.pick(WILDCARDS)),
  );
  const ref = r.pick(APP_SECRETS);
  return {
    name,
    hostnames,
    secret: {
      // The Registry's own namespace is sometimes left out: it is the default.
      namespace: ref.namespace === "platform" && r.chance(0.5) ? null : ref.namespace,
      name: ref.name,
      key: r.chance(0.8) ? "token" : "alt",
    },
    upstream: r.chance(0.7) ? r.pick(UPSTREAMS) : null,
    credential: randomCredential(c),
    extras: r.chance(0.3),
  };
}

function shuffle<T>(r: Random, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The next Registry: a small edit of the current one (or a fresh one), order shuffled. */
function editRegistry(r: Random, c: Random, apps: readonly AppDef[]): AppDef[] {
  const next = [...apps];
  const free = APP_NAMES.filter((n) => !next.some((a) => a.name === n));
  const idx = () => r.int(next.length);
  const edit = next.length === 0 ? 0 : r.int(8);
  switch (edit) {
    case 0: // add an App
      if (free.length > 0) next.push(randomApp(r, c, r.pick(free)));
      break;
    case 1: // remove an App
      next.splice(idx(), 1);
      break;
    case 2: {
      // move a hostname from one App to another
      const from = idx();
      const to = idx();
      const a = next[from]!;
      if (a.hostnames.length > 1 && from !== to) {
        const h = r.pick(a.hostnames);
        next[from] = { ...a, hostnames: a.hostnames.filter((x) => x !== h) };
        const b = next[to]!;
        next[to] = { ...b, hostnames: [...b.hostnames, spell(r, canonicalOf(h))] };
      }
      break;
    }
    case 3: {
      // a conflict: a second App claims a hostname some App already has
      const a = next[idx()]!;
      const to = idx();
      const b = next[to]!;
      next[to] = { ...b, hostnames: [...b.hostnames, spell(r, canonicalOf(r.pick(a.hostnames)))] };
      break;
    }
    case 4: {
      const i = idx();
      const a = next[i]!;
      next[i] = { ...a, hostnames: [...a.hostnames, spell(r, r.pick(WILDCARDS))] };
      break;
    }
    case 5: {
      // a new Secret reference, key or upstream
      const i = idx();
      const fresh = randomApp(r, c, next[i]!.name);
      next[i] = r.chance(0.5)
        ? { ...next[i]!, secret: fresh.secret }
        : { ...next[i]!, upstream: fresh.upstream };
      // A key made a credential's (its value fetched again), or one no longer.
      if (c.chance(0.4)) next[i] = { ...next[i]!, credential: fresh.credential };
      break;
    }
    case 6: // a fresh Registry
      return shuffle(r, APP_NAMES)
        .slice(0, r.between(1, 5))
        .map((n) => randomApp(r, c, n));
    default: {
      // replace one App entirely
      const i = idx();
      next[i] = randomApp(r, c, next[i]!.name);
    }
  }
  return shuffle(r, next);
}

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
  readonly #s = new Shadow();
  readonly #queue: Op[] = [];
  #untilQuiesce: number;

  constructor(seed: number) {
    this.#r = seeded(seed);
    this.#c = seeded(seed + 0x5eed_c0de);
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
    if (this.#r.chance(0.55)) this.#queue.push(...this.#worldOps());
    else this.#queue.push(...this.#faultOps());
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
    // a malformed Registry, then the fix (a quiescent point may fall between them)
    const bad: Op = { op: "registry-bad", variant: r.pick(BAD), apps: this.#s.apps };
    if (allowQuiesce && r.chance(0.3)) {
      this.#untilQuiesce = r.between(3, 9);
      return [bad, ...this.#gap(), { op: "quiesce" }, this.#registry(), ...this.#gap()];
    }
    return [bad, ...this.#gap(), this.#registry(), ...this.#gap()];
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
