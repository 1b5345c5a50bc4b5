import { parseRegistry } from "../src/registry/parse.ts";
import { build, rebuildForSecrets } from "../src/snapshot/build.ts";
import { lookup } from "../src/snapshot/lookup.ts";
import { meta } from "../test/support/world.ts";
import { registryBytes, secretsFor } from "./fixtures.ts";
import { fmt, median, type Row, sample } from "./measure.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

/** Pure-core figures: parse, whole build, one-Secret incremental rebuild, and lookup. */
export function benchCore(ctx: SuiteContext): SuiteOutput {
  const quick = ctx.quick;
  const rows: Row[] = [];
  const window = quick ? 300 : 1500;
  const registries = new Map<number, ReturnType<typeof parsed>>();
  function parsed(n: number) {
    const r = parseRegistry(registryBytes(n, true), { defaultNamespace: "default" });
    if (!r.ok) throw new Error(r.error.message);
    return r.value.registry;
  }

  for (const gzip of [false, true]) {
    const bytes = registryBytes(10_000, gzip);
    const t = median(sample(() => parseRegistry(bytes, { defaultNamespace: "default" }), window));
    rows.push({
      bench: `parse 10k-App registry (${gzip ? "gzip" : "plain"}, ${fmt(bytes.length / 1024, 0)} KiB)`,
      figure: `${fmt(t)} ms`,
      baseline: `JSON.parse alone ${fmt(median(sample(() => JSON.parse(registryBytes(10_000, false).toString()), window / 3)))} ms`,
      ratio: "-",
      target: "-",
      met: "-",
    });
  }

  for (const n of [1_000, 10_000, 100_000]) {
    const registry = parsed(n);
    registries.set(n, registry);
    const secrets = secretsFor(n);
    // A new Registry object each time: build() keeps one route table per Registry object, and a
    // whole build is of a document it has not seen.
    const whole = median(sample(() => build({ ...registry }, secrets, meta(1)), window, 3));
    const target = n === 10_000 ? 15 : n === 100_000 ? 200 : Number.POSITIVE_INFINITY;
    const copy = median(
      sample(
        () => new Map(Array.from(secrets.entries(), ([ns, name, v]) => [`${ns}/${name}`, v])),
        window / 3,
        3,
      ),
    );
    rows.push({
      bench: `build ${n / 1000}k Apps (whole)`,
      figure: `${fmt(whole)} ms`,
      baseline: `a Map of the Secrets by key ${fmt(copy)} ms`,
      ratio: `${fmt(whole / copy, 1)}x`,
      target: Number.isFinite(target) ? `< ${target} ms` : "-",
      met: Number.isFinite(target) ? (whole < target ? "yes" : "no") : "-",
    });

    let previous = build(registry, secrets, meta(1));
    let revision = 1;
    const key = { namespace: "tenant-7", name: "app-7-credentials" };
    const incremental = median(
      sample(() => {
        secrets.set(key.namespace, key.name, {
          data: { token: `v${revision}` },
          resourceVersion: String(1e9 + revision),
        });
        previous = rebuildForSecrets(previous, [key], secrets, meta(++revision));
      }, window),
    );
    rows.push({
      bench: `one App Secret changed, ${n / 1000}k Apps (incremental)`,
      figure: `${fmt(incremental * 1000)} µs`,
      baseline: `whole build ${fmt(whole)} ms`,
      ratio: `${fmt(whole / incremental, 0)}x faster`,
      target: n === 100_000 ? "< 1 ms" : "-",
      met: n === 100_000 ? (incremental < 1 ? "yes" : "no") : "-",
    });
  }

  const registry = registries.get(100_000)!;
  const snapshot = build(registry, secretsFor(100_000), meta(1));
  // Flat strings, as the HTTP parser hands them over (a template literal makes a rope).
  const flat = (hosts: string[]) => JSON.parse(JSON.stringify(hosts)) as string[];
  const hosts = {
    "hit exact": flat(
      Array.from({ length: 4096 }, (_, i) => `app-${(i * 7919) % 100_000}.example.com`),
    ),
    "hit wildcard": flat(
      Array.from({ length: 4096 }, (_, i) => `x.y.app-${((i * 7919) % 10_000) * 10}.example.com`),
    ),
    miss: flat(Array.from({ length: 4096 }, (_, i) => `nope-${i}.example.org`)),
  };
  const cases: PerCallCase[] = [
    { name: "Map.get", hosts: hosts["hit exact"], fn: (h) => snapshot.routes.exact.get(h) },
    ...Object.entries(hosts).map(([name, list]) => ({
      name,
      hosts: list,
      fn: (h: string) => lookup(snapshot, h),
    })),
  ];
  const ns = perCallMedians(cases, quick ? 15 : 41);
  const mapGet = ns.get("Map.get")!;
  for (const kind of Object.keys(hosts)) {
    const t = ns.get(kind)!;
    rows.push({
      bench: `lookup at 100k Apps, ${kind}`,
      figure: `${fmt(t, 0)} ns/call`,
      baseline: `Map.get ${fmt(mapGet, 0)} ns`,
      ratio: `${fmt(t / mapGet, 1)}x`,
      target: "< 1 µs",
      met: t < 1000 ? "yes" : "no",
    });
  }
  return { rows, data: null };
}

interface PerCallCase {
  readonly name: string;
  readonly hosts: readonly string[];
  readonly fn: (host: string) => unknown;
}

/**
 * Nanoseconds per call of each case: many short batches, the cases interleaved in a rotating
 * order, and the median batch per case, so a neighbour's burst on a shared machine moves a few
 * batches rather than one case's whole figure.
 */
function perCallMedians(cases: readonly PerCallCase[], trials: number): Map<string, number> {
  let sink = 0;
  const batch = (c: PerCallCase, rounds: number) => {
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++) for (const h of c.hosts) sink += c.fn(h) === undefined ? 0 : 1;
    return ((performance.now() - t0) * 1e6) / (rounds * c.hosts.length);
  };
  for (const c of cases) batch(c, 20);
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let t = 0; t < trials; t++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + t) % cases.length]!;
      times.get(c.name)!.push(batch(c, 10));
    }
  }
  if (sink < 0) console.log(sink);
  return new Map([...times].map(([name, xs]) => [name, median(xs)]));
}
