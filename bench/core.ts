import { parseRegistry } from "../src/registry/parse.ts";
import { build, rebuildForSecrets } from "../src/snapshot/build.ts";
import { lookup } from "../src/snapshot/lookup.ts";
import { registryBytes, secretsFor } from "./fixtures.ts";
import { fmt, median, type Row, sample } from "./measure.ts";

const meta = (revision: number) => ({
  revision,
  builtAt: 0,
  registry: { present: true, resourceVersion: "1", error: null },
});

/** Pure-core figures: parse, whole build, one-Secret incremental rebuild, and lookup. */
export function benchCore(quick: boolean): Row[] {
  const rows: Row[] = [];
  const window = quick ? 300 : 1500;
  const registries = new Map<number, ReturnType<typeof parsed>>();
  function parsed(n: number) {
    const r = parseRegistry(registryBytes(n, true), { defaultNamespace: "default" });
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
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
    const whole = median(sample(() => build(registry, secrets, meta(1)), window, 3));
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
  const hosts = {
    "hit exact": Array.from({ length: 4096 }, (_, i) => `app-${(i * 7919) % 100_000}.example.com`),
    "hit wildcard": Array.from(
      { length: 4096 },
      (_, i) => `x.y.app-${((i * 7919) % 10_000) * 10}.example.com`,
    ),
    miss: Array.from({ length: 4096 }, (_, i) => `nope-${i}.example.org`),
  };
  const mapGet = perCall(hosts["hit exact"], (h) => snapshot.routes.exact.get(h));
  for (const [kind, list] of Object.entries(hosts)) {
    const ns = perCall(list, (h) => lookup(snapshot, h));
    rows.push({
      bench: `lookup at 100k Apps, ${kind}`,
      figure: `${fmt(ns, 0)} ns/call`,
      baseline: `Map.get ${fmt(mapGet, 0)} ns`,
      ratio: `${fmt(ns / mapGet, 1)}x`,
      target: "< 1 µs",
      met: ns < 1000 ? "yes" : "no",
    });
  }
  return rows;
}

function perCall(hosts: readonly string[], fn: (h: string) => unknown): number {
  let sink = 0;
  const rounds = 200;
  for (let r = 0; r < 20; r++) for (const h of hosts) sink += fn(h) === undefined ? 0 : 1;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) for (const h of hosts) sink += fn(h) === undefined ? 0 : 1;
  const ns = ((performance.now() - t0) * 1e6) / (rounds * hosts.length);
  if (sink < 0) console.log(sink);
  return ns;
}
