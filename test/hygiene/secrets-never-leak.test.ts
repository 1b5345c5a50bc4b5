// Secret bytes never leave the process: two `serve` processes (one at debug, one at trace, as
// two replicas would run) go through a churn of App Secrets with recognisable random values —
// create, update, delete, recreate — a gzip Registry, malformed Registries, unreferenced Secrets
// and watch faults. Everything they wrote (stdout and stderr), every /metrics scrape, every JSON
// answer of the lookup API and every header of /v1/route is scanned for each value: raw, as
// base64 (how the API and the Snapshot hold it), and for the Registry Secret's own bytes; shop's
// private key, served and renewed with --serve-certificates, as written and re-encoded.
// Building on test/http/secrets-never-served.test.ts, which does the same for one Snapshot
// through inject().

import { createPrivateKey, randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { ENVTEST_TOKEN, type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRecord } from "../../src/ops/records.ts";
import { makeCertificate } from "../support/certificates.ts";
import { get, untilReady } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { waitUntil } from "../support/wait.ts";
import {
  APP_NS,
  deleteRegistry,
  kubeconfigFor,
  REGISTRY_API_VERSION,
  REGISTRY_KEY,
  registryDoc,
  writeRegistryData,
} from "../support/world.ts";

const APPS = [
  {
    name: "shop",
    hostnames: ["shop.example.com", "*.shop.example.com"],
    secret: "shop-credentials",
    namespace: APP_NS,
    upstream: "http://shop:8080",
    tls: "shop-tls",
  },
  { name: "blog", hostnames: ["blog.example.com"], secret: "blog-credentials", namespace: APP_NS },
  { name: "wiki", hostnames: ["wiki.example.com"], secret: "wiki-credentials", namespace: APP_NS },
];
const HOSTS = [
  "shop.example.com",
  "a.shop.example.com",
  "blog.example.com",
  "wiki.example.com",
  "nope.example.org",
];

/** Every value written anywhere in this test that must never come out. */
const forbidden = new Set<string>();
/** A fresh recognisable value: 24 random characters. */
function marker(): string {
  const m = randomBytes(18).toString("base64").replace(/[+/]/g, "x");
  forbidden.add(m);
  forbidden.add(Buffer.from(m).toString("base64"));
  return m;
}

let envtest: Envtest;
let kubeconfig: { path: string; remove: () => Promise<void> };
let replicas: SidecarProcess[];
/** Every answer body and header block collected from every replica. */
const answers: string[] = [];

function putSecret(name: string, extra: Record<string, string> = {}): string {
  const rv = envtest.apply({
    namespace: APP_NS,
    name,
    data: { token: marker(), "other-key": marker(), ...extra },
  });
  return rv.metadata.resourceVersion;
}

/** A new certificate in shop's TLS Secret: its key, as written and as a proxy gets it, forbidden. */
function putCertificate(): string {
  const cert = makeCertificate({ names: ["shop.example.com", "*.shop.example.com"] });
  const pkcs8 = createPrivateKey(cert.key).export({ type: "pkcs8", format: "pem" }).toString();
  for (const pem of [cert.key, pkcs8]) {
    forbidden.add(pem.split("\n")[1]!);
    forbidden.add(Buffer.from(pem).toString("base64").slice(0, 64));
  }
  const data = { "tls.crt": cert.crt, "tls.key": cert.key };
  return envtest.apply({ namespace: APP_NS, name: "shop-tls", data }).metadata.resourceVersion;
}

function putRegistry(value: Buffer | string): string {
  const bytes = Buffer.from(value);
  forbidden.add(bytes.toString("base64"));
  // The Registry Secret also holds a key the mirror never reads.
  return writeRegistryData(envtest, { [REGISTRY_KEY]: bytes, "signing-key": marker() });
}

/** Collects every answer of both listeners of one replica. */
async function collect(r: SidecarProcess): Promise<void> {
  const paths = [
    "/v1/apps",
    "/v1/snapshot",
    ...APPS.map((a) => `/v1/apps/${a.name}`),
    ...HOSTS.map((h) => `/v1/hosts/${h}`),
  ];
  for (const p of paths) {
    const a = await get(r.opsPort, p);
    answers.push(`${p} ${JSON.stringify(a.headers)} ${a.body}`);
  }
  for (const h of HOSTS) {
    for (const via of [{ host: h }, { host: "127.0.0.1", "x-forwarded-host": h }] as Record<
      string,
      string
    >[]) {
      const a = await get(r.dataPort, "/v1/route/some/path", via);
      answers.push(`/v1/route ${h} ${a.status} ${JSON.stringify(a.headers)} ${a.body}`);
    }
  }
  for (const p of ["/metrics", "/readyz", "/healthz"]) {
    const a = await get(r.opsPort, p);
    answers.push(`${p} ${JSON.stringify(a.headers)} ${a.body}`);
  }
}

/** Waits until every replica serves each App's Secret at the API server's resourceVersion, then collects. */
async function settle(what: string, registryRv?: string): Promise<void> {
  const want = Object.fromEntries(
    APPS.map((a) => [a.name, envtest.get(APP_NS, a.secret)?.metadata.resourceVersion ?? null]),
  );
  for (const r of replicas) {
    await waitUntil(
      async () => {
        const body = JSON.parse((await get(r.opsPort, "/v1/apps")).body) as { apps?: AppRecord[] };
        const snapshot = JSON.parse((await get(r.opsPort, "/v1/snapshot")).body) as {
          registry: { resourceVersion: string | null } | null;
        };
        if (registryRv !== undefined && snapshot.registry?.resourceVersion !== registryRv)
          return undefined;
        const have = Object.fromEntries(
          (body.apps ?? []).map((a) => [a.name, a.secretResourceVersion]),
        );
        const tls = envtest.get(APP_NS, "shop-tls")?.metadata.resourceVersion ?? null;
        const shop = (body.apps ?? []).find((a) => a.name === "shop");
        if (shop !== undefined && shop.tls?.secretResourceVersion !== tls) return undefined;
        return Object.entries(have).every(([name, rv]) => want[name] === rv) ? true : undefined;
      },
      { timeoutMs: 20_000, what: `${what} (pid ${r.pid})` },
    );
    await collect(r);
  }
}

function leaks(text: string): string[] {
  return [...forbidden].filter((f) => text.includes(f));
}

beforeAll(async () => {
  envtest = await startEnvtest({ bookmarkIntervalMs: 300 });
  putSecret("shop-credentials");
  putCertificate();
  // Not referenced by any App: its bytes must not even be kept.
  envtest.apply({ namespace: APP_NS, name: "unrelated", data: { token: marker() } });
  putRegistry(gzipSync(JSON.stringify(registryDoc(APPS))));
  kubeconfig = await kubeconfigFor(envtest);
  replicas = await Promise.all(
    (["debug", "trace"] as const).map((logLevel) =>
      startSidecarProcess({
        kubeconfig: kubeconfig.path,
        logLevel,
        watchTimeoutSeconds: 1,
        extraArgs: ["--serve-certificates", "true"],
      }),
    ),
  );
  for (const r of replicas) await untilReady(r.opsPort);
}, 30_000);

afterAll(async () => {
  await Promise.all((replicas ?? []).map((r) => r.stop()));
  await envtest?.close();
  await kubeconfig?.remove();
});

describe("Secret bytes through a churn of Secrets, Registries and watch faults", () => {
  it("never appear in any log line, metric, JSON answer or route header of either replica", async () => {
    await settle("start");
    // The bytes are really there to leak: each replica routes shop, so it holds its Secret.
    for (const r of replicas) {
      const a = await get(r.dataPort, "/v1/route", { host: "shop.example.com" });
      expect([a.status, a.headers["x-mirror-app"]]).toEqual([200, "shop"]);
      const shop = JSON.parse((await get(r.opsPort, "/v1/apps/shop")).body) as AppRecord;
      expect(shop.tls?.state).toBe("served");
    }

    putSecret("shop-credentials");
    await settle("shop updated");
    putCertificate();
    await settle("shop's certificate renewed");
    envtest.apply({ namespace: APP_NS, name: "shop-tls", data: { "tls.key": "not a key" } });
    await settle("shop's certificate refused");
    putSecret("blog-credentials");
    await settle("blog created");
    envtest.delete(APP_NS, "shop-credentials");
    await settle("shop deleted");
    putSecret("shop-credentials");
    await settle("shop recreated");
    putSecret("wiki-credentials", { token: "" });
    await settle("wiki with an empty value");

    // Malformed Registries: the last good one stays, the error is reported.
    const doc = JSON.stringify(registryDoc(APPS));
    await settle("truncated gzip", putRegistry(gzipSync(doc).subarray(0, 30)));
    await settle("not JSON", putRegistry(`${doc.slice(0, doc.length / 2)}`));
    await settle(
      "invalid document",
      putRegistry(JSON.stringify({ apiVersion: REGISTRY_API_VERSION, apps: [{ name: "Bad!" }] })),
    );
    await settle("key missing", writeRegistryData(envtest, { other: marker() }));
    await settle("good again", putRegistry(gzipSync(doc)));
    for (const r of replicas) {
      const s = JSON.parse((await get(r.opsPort, "/v1/snapshot")).body) as {
        registry: { error: string | null };
      };
      expect(s.registry.error).toBeNull();
    }

    // Watch faults, each followed by a change that must arrive.
    envtest.faults.dropWatches();
    putSecret("blog-credentials");
    await settle("after dropped watches");
    for (const kind of ["bytes", "truncated", "non-json"] as const) {
      await new Promise((r) => setTimeout(r, 1_100)); // a normal watch turnover between bad lines
      envtest.faults.injectGarbage(kind);
      putSecret("shop-credentials");
      await settle(`after ${kind} garbage`);
    }
    envtest.faults.chunking({ mode: "split", seed: 5 });
    putSecret("blog-credentials");
    await settle("lines split");
    envtest.faults.chunking({ mode: "coalesce", seed: 6 });
    putSecret("shop-credentials");
    envtest.apply({ namespace: APP_NS, name: "unrelated", data: { token: marker() } });
    await settle("lines coalesced");
    envtest.faults.reset();
    envtest.faults.stall(true);
    putSecret("blog-credentials");
    envtest.faults.compact();
    envtest.faults.dropWatches();
    envtest.faults.stall(false);
    await settle("relist after 410");
    envtest.faults.failNext({ verb: "watch", count: 2, status: 500 });
    envtest.faults.dropWatches();
    putSecret("shop-credentials");
    await settle("after failed watches");
    deleteRegistry(envtest);
    await settle("Registry deleted");
    await settle("Registry recreated", putRegistry(doc));

    for (const r of replicas) expect(r.alive()).toBe(true);
    const output = replicas.map((r) => r.output());
    // Enough was written for the scan to mean something: every request was logged at debug.
    for (const o of output) expect(o.split("\n").length).toBeGreaterThan(answers.length / 2);
    expect(output.join("\n")).toContain("Registry refused");
    console.log(
      `secrets hygiene: ${forbidden.size} forbidden strings; scanned ${output.map((o) => o.length).join(" + ")} bytes of output and ${answers.length} answers`,
    );
    expect(leaks(output.join("\n"))).toEqual([]);
    expect(leaks(answers.join("\n"))).toEqual([]);
    // The API credential is not Secret data, but it must not be logged either.
    expect(output.join("\n")).not.toContain(ENVTEST_TOKEN);
  }, 120_000);
});
