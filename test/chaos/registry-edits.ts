// The Registry the generator writes: Apps drawn at random and small edits of the current ones.
import type { Random } from "../support/random.ts";
import { EXACT, WILDCARDS } from "./hosts.ts";
import type { AppDef } from "./model.ts";

export const APP_NAMES = ["aaa", "api", "blog", "edge", "shop", "zed"];

/** Referenced Secrets. tenant-c lies outside the namespaces one sidecar watches. */
export const APP_SECRETS: readonly { namespace: string; name: string }[] = [
  { namespace: "tenant-a", name: "shop-credentials" },
  { namespace: "tenant-a", name: "shared" },
  { namespace: "tenant-b", name: "blog-credentials" },
  { namespace: "tenant-b", name: "shared" },
  { namespace: "platform", name: "edge-credentials" },
  { namespace: "tenant-c", name: "zed-credentials" },
];

const UPSTREAMS = [
  "http://shop.tenant-a.svc:8080",
  "http://blog.tenant-b.svc",
  "https://api:443/v1",
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

export function randomApp(r: Random, c: Random, name: string): AppDef {
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

export function shuffle<T>(r: Random, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The next Registry: a small edit of the current one (or a fresh one), order shuffled. */
export function editRegistry(r: Random, c: Random, apps: readonly AppDef[]): AppDef[] {
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
