// What the chaos runs found, in the product or in the model, each pinned by the smallest test
// that shows it.
import { describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { normaliseRequestHost } from "../../src/registry/hostname.ts";
import { ok } from "../../src/result.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { findApp, listApps } from "../../src/snapshot/lookup.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { startTestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import {
  envtestFor,
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registrySource,
  writeRegistry,
  writeRegistryValue,
} from "../support/world.ts";
import { badRegistryData, badRegistryValue, goodRegistryData } from "./apply.ts";
import { expectedAtQuiescence } from "./check.ts";
import { generate } from "./generate.ts";
import { History } from "./history.ts";
import type { Op } from "./ops.ts";

describe("found by the chaos model check", () => {
  // Seeds 1 and 2 (any prefix): the probe `x{64}.example.com` was routed by `*.example.com`
  // when sent in lower case, and refused as bad-host when sent in upper case or with a port.
  // Fixed: the fast path of normaliseRequestHost checks label lengths too (in 9880b24).
  it("refuses a request host with a label over 63 characters however it is spelled", () => {
    const label = "x".repeat(64);
    const spellings = [
      `${label}.example.com`,
      `${label.toUpperCase()}.example.com`,
      `${label}.example.com.`,
      `${label}.example.com:8443`,
    ];
    expect(spellings.map((h) => normaliseRequestHost(h).ok)).toEqual([false, false, false, false]);
  });

  // Seed 1, 60 steps, operations 57-60: registry-delete, registry {api, aaa, edge},
  // registry-bad, quiesce. All three sidecars kept serving the Registry from before the delete.
  // Fixed: RegistryTracker falls back to the newest good value delivered (in 9880b24).
  it("keeps the last good Registry when it and a refused value arrive before one rebuild", async () => {
    const envtest = await envtestFor();
    const m = await startTestSidecar(envtest);
    try {
      writeRegistry(envtest, [{ name: "old", hostnames: ["old.example.com"] }]);
      await waitUntil(() => (m.holder.current()?.apps.size === 1 ? true : undefined));
      // Written in one turn, the two values reach the mirror in one chunk, before one rebuild.
      writeRegistry(envtest, [{ name: "new", hostnames: ["new.example.com"] }]);
      writeRegistryValue(envtest, "{");
      await waitUntil(() => (m.holder.current()?.registry.error ? true : undefined));
      await m.mirror.idle();
      expect(listApps(m.holder.current()!).map((a) => a.name)).toEqual(["new"]);
    } finally {
      await m.stop();
      await envtest.close();
    }
  });

  // Seed 2003, 60 steps, the first 51 operations: tenant-a/shared held only `alt` (rv 25) while
  // the Registry read its `token`, so the store kept nothing of it; a Registry that then read
  // `alt` fetched rv 25 again, and the store took the same version for old news: key-missing at
  // rv 25 for good, while the key was there. Fixed: the store remembers the keys it kept a
  // Secret's bytes for, and takes the same version again when a key was referenced since.
  it("reads a newly referenced key of a Secret it already holds at the same version", async () => {
    const envtest = await envtestFor();
    const m = await startTestSidecar(envtest);
    try {
      envtest.apply({ namespace: "default", name: "shared", data: { alt: "a1" } });
      const app = (key: string) => [
        {
          name: "shop",
          hostnames: ["shop.example.com"],
          namespace: "default",
          secret: "shared",
          key,
        },
      ];
      writeRegistry(envtest, app("token"));
      await waitUntil(() =>
        m.holder.current() && findApp(m.holder.current()!, "shop")?.reason === "key-missing"
          ? true
          : undefined,
      );
      writeRegistry(envtest, app("alt"));
      await waitUntil(() =>
        findApp(m.holder.current()!, "shop")?.secretRef.key === "alt" ? true : undefined,
      );
      await m.mirror.idle();
      const shop = findApp(m.holder.current()!, "shop");
      expect([shop?.ready, shop?.reason]).toEqual([true, null]);
    } finally {
      await m.stop();
      await envtest.close();
    }
  });

  // Seed 40, 80 steps, the first 15 operations (sidecar c, and a in another run): a relist after
  // 410 found tenant-b/blog-credentials deleted, yet the sidecar kept serving it (key-missing at
  // rv 14) for good. The Secret watch had missed rv 14 (a decode restart, then 410), while the
  // Registry change that referenced the Secret had fetched rv 14 with a GET. The relist's DELETED
  // carries the reflector's last delivered version (rv 3), older than the store's rv 14, so the
  // store discards it as stale and the deletion is lost.
  // Fixed: after every list the store reconciles what it holds against the keys listed.
  it("forgets a Secret a relist finds deleted, even when a fetch stored a newer version", async () => {
    // Values as the decoders hand them on: byte strings (ADR 20).
    const bytes = (s: string) => Buffer.from(s).toString("latin1");
    const registryLw = new FakeListWatch();
    const secretsLw = new FakeListWatch();
    const registry = (rv: string, apps: { name: string; secret: string }[]) => ({
      metadata: { namespace: REGISTRY_NS, name: REGISTRY_NAME, resourceVersion: rv },
      data: {
        [REGISTRY_KEY]: bytes(
          JSON.stringify(
            registryDoc(
              apps.map((a) => ({
                name: a.name,
                hostnames: [`${a.name}.example.com`],
                namespace: "default",
                secret: a.secret,
              })),
            ),
          ),
        ),
      },
    });
    const { holder, mirror } = mirrorOver(registryLw, secretsLw);
    registryLw.replyList(
      ok(page("10", [registry("10", [{ name: "shop", secret: "shop-credentials" }])])),
    );
    // blog-credentials exists, unreferenced: the reflector knows it at rv 3.
    secretsLw.replyList(ok(page("10", [secret("blog-credentials", "3", { token: bytes("b1") })])));
    mirror.start();
    try {
      await waitUntil(() => holder.current() ?? undefined);
      // Its update to rv 14 never reaches the watch; a GET sees it.
      secretsLw.objects.set(
        "default/blog-credentials",
        secret("blog-credentials", "14", { other: bytes("x") }),
      );
      registryLw.current.modify(registry("15", [{ name: "blog", secret: "blog-credentials" }]));
      await waitUntil(() =>
        findApp(holder.current()!, "blog")?.reason === "key-missing" ? true : undefined,
      );
      // Deleted while the watch is gone; the resume gets 410 and the relist does not list it.
      secretsLw.current.error({
        code: 410,
        reason: "Expired",
        message: "too old resource version",
      });
      secretsLw.replyList(ok(page("20", [])));
      await waitUntil(() => (secretsLw.watches.length === 2 ? true : undefined));
      await mirror.idle();
      expect(findApp(holder.current()!, "blog")?.reason).toBe("secret-absent");
    } finally {
      await mirror.stop();
    }
  });

  // Seed 9324, 40 steps, the first 24 operations (sidecar a): a Registry read `alt` of
  // tenant-c/zed-credentials, held for another App's `token`, just before the API server
  // restarted; the fetch of its `alt` failed, and the App showed `key-missing` at rv 6, a key the
  // Secret had all along, until the retry. Fixed: a key not read yet is served as any Secret not
  // fetched yet is, absent (src/snapshot/read-secret.ts).
  it("serves a newly read key of a held Secret as not fetched while its fetch fails", async () => {
    const envtest = await envtestFor();
    const m = await startTestSidecar(envtest);
    const app = (name: string, key: string) => ({
      name,
      hostnames: [`${name}.example.com`],
      namespace: "default",
      secret: "shared",
      key,
    });
    const blog = () => findApp(m.holder.current()!, "blog");
    try {
      envtest.apply({ namespace: "default", name: "shared", data: { token: "t1", alt: "a1" } });
      writeRegistry(envtest, [app("shop", "token")]);
      await waitUntil(() => (findApp(m.holder.current()!, "shop")?.ready ? true : undefined));
      envtest.faults.failNext({ verb: "get", count: 1, status: 500 });
      writeRegistry(envtest, [app("shop", "token"), app("blog", "alt")]);
      await waitUntil(() => blog());
      expect([blog()?.reason, blog()?.secretResourceVersion]).toEqual(["secret-absent", null]);
      // The retry, a second later, reads it.
      await waitUntil(() => (blog()?.ready ? true : undefined));
      expect([blog()?.reason, findApp(m.holder.current()!, "shop")?.ready]).toEqual([null, true]);
    } finally {
      await m.stop();
      await envtest.close();
    }
  });
});

// Seed 75936, 15 steps (3 runs of 3 on 713a2d5), sidecar c: the Registry {zed, api} (rv 6),
// deleted (rv 8), {zed} (rv 9), {zed} gzip (rv 10), then `wrong-type`: zed's entry with
// `hostnames` a string (rv 11). Sidecar c's Registry watch broke after the deletion, the resume
// got 410 (compacted) and its relist listed rv 11 alone: since the deletion it never had a zed in
// service, so zed is refused and absent (README, "The Registry document": a refused App keeps
// *its* last good version, or stays absent). The model wanted zed kept, as if every sidecar had
// seen rv 9 or 10: it let a relist skip values only before a value refused whole.
// Fixed in the model: expectedAtQuiescence (check.ts) allows the same skip before a value with a
// refused App entry.
describe("seed 75936: a relist that skipped the last good values, then an App entry refused", () => {
  const { initial, ops } = generate(75936, 15);
  const registryOps = [...initial, ...ops].filter(
    (op): op is Extract<Op, { op: "registry" | "registry-bad" }> =>
      op.op === "registry" || op.op === "registry-bad",
  );
  const first = registryOps[0]!;
  const last = registryOps.at(-1)!;
  const bytes = (data: Record<string, string | Uint8Array>): Record<string, string> =>
    Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("latin1")]),
    );
  const registrySecret = (rv: string, data: Record<string, string>): SecretObject => ({
    metadata: { namespace: REGISTRY_NS, name: REGISTRY_NAME, resourceVersion: rv },
    data,
  });

  it("serves the refused App nowhere when the replica never had it in service", async () => {
    if (first.op !== "registry" || last.op !== "registry-bad") throw new Error("not the seed");
    const registryLw = new FakeListWatch();
    const secretsLw = new FakeListWatch();
    const { holder, mirror } = mirrorOver(registryLw, secretsLw);
    const refused = bytes(badRegistryData(last.variant, last.apps));
    registryLw.replyList(
      ok(page("6", [registrySecret("6", bytes(goodRegistryData(first.apps, false)))])),
    );
    secretsLw.replyList(ok(page("6", [])));
    mirror.start();
    try {
      await waitUntil(() => (holder.current()?.apps.size === 2 ? true : undefined));
      registryLw.current.delete(registrySecret("8", {}));
      await waitUntil(() => (holder.current()?.registry.present === false ? true : undefined));
      // rv 9 and 10 are written while the watch is gone; its resume finds them compacted.
      registryLw.current.error({
        code: 410,
        reason: "Expired",
        message: "too old resource version",
      });
      registryLw.replyList(ok(page("11", [registrySecret("11", refused)])));
      await waitUntil(() =>
        holder.current()?.registry.resourceVersion === "11" ? true : undefined,
      );
      await mirror.idle();
      const { registry } = holder.current()!;
      expect({
        apps: listApps(holder.current()!).map((a) => a.name),
        error: registry.error,
        refused: registry.refusedApps.map(({ index, name, kept }) => ({ index, name, kept })),
      }).toEqual({ apps: [], error: null, refused: [{ index: 0, name: "zed", kept: false }] });
    } finally {
      await mirror.stop();
    }
  });

  it("is a world the model allows a sidecar that relisted after the last good value", () => {
    const history = new History({ registry: { kind: "absent" }, registryRv: null });
    let rv = 0;
    for (const op of [...initial, ...ops]) {
      if (op.op === "registry") history.setRegistry({ kind: "good", apps: op.apps }, String(++rv));
      if (op.op === "registry-bad")
        history.setRegistry(badRegistryValue(op.variant, op.apps), String(++rv));
      if (op.op === "registry-delete") history.setRegistry({ kind: "absent" }, null);
    }
    // The window opens at the quiescent point after the initial writes (one: the Registry).
    const window = history.states.slice(1);
    const worlds = expectedAtQuiescence(window, {
      visible: () => true,
      serveCredentials: false,
      fetchFailed: false,
      registryRelisted: true,
      served: (state) => state.served,
      registryRelists: [history.latestIndex],
    });
    // The latest state's own (zed kept from rv 10), then zed kept from {zed, api}, none kept
    // after the deletion, and zed kept from rv 9.
    expect(worlds.map((w) => w.served.map((a) => a.name))).toEqual([["zed"], ["zed"], [], ["zed"]]);
  });
});

/** A mirror of the Registry and App Secrets the two fake list-watches serve, retrying at once. */
function mirrorOver(registryLw: FakeListWatch, secretsLw: FakeListWatch) {
  const holder = new SnapshotHolder();
  const mirror = new Mirror({
    registry: registrySource(registryLw),
    secrets: { scopes: [{ namespace: null, listWatch: secretsLw }] },
    holder,
    watchTimeoutSeconds: 60,
    // The lists are scripted: a server without streaming lists.
    reflector: {
      backoff: { initialMs: 1, capMs: 2 },
      relistSpreadMs: 0,
      streamingLists: new StreamingLists(false),
    },
  });
  return { holder, mirror };
}
