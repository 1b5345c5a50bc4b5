/** The bytes a Registry write puts in the Registry Secret: documents as a leader writes them, good and bad. */
import { gzipSync } from "node:zlib";
import { type AppDef, REGISTRY_KEY } from "./model.ts";
import type { BadRegistry } from "./ops.ts";

const API_VERSION = "replica-mirror/v1";

function appJson(a: AppDef): Record<string, unknown> {
  return {
    name: a.name,
    hostnames: a.hostnames,
    secretRef: {
      ...(a.secret.namespace === null ? {} : { namespace: a.secret.namespace }),
      name: a.secret.name,
      key: a.secret.key,
    },
    ...(a.upstream === null ? {} : { upstream: a.upstream }),
    // Forward compatibility: unknown fields are ignored, and so is the leader's readiness.
    ...(a.extras ? { secretReady: a.name.length % 2 === 0, labels: { tier: "gold" }, x: 1 } : {}),
  };
}

const document = (apps: readonly AppDef[], extra: object = {}) =>
  JSON.stringify({ apiVersion: API_VERSION, apps: apps.map(appJson), ...extra });

const FALLBACK: AppDef = {
  name: "shop",
  hostnames: ["shop.example.com"],
  secret: { namespace: "tenant-a", name: "shop-credentials", key: "token" },
  upstream: null,
  extras: false,
};

/** The Registry Secret's data for a good document. */
export function goodRegistryData(
  apps: readonly AppDef[],
  gzip: boolean,
): Record<string, string | Uint8Array> {
  const json = document(apps, apps.some((a) => a.extras) ? { generation: 7 } : {});
  return { [REGISTRY_KEY]: gzip ? new Uint8Array(gzipSync(json)) : json };
}

/** The Registry Secret's data for a value the spec says to refuse (the last good one is kept). */
export function badRegistryData(
  variant: BadRegistry,
  apps: readonly AppDef[],
): Record<string, string | Uint8Array> {
  const base = apps.length > 0 ? [...apps] : [FALLBACK];
  const first = base[0]!;
  const withFirst = (a: AppDef) => [a, ...base.slice(1)];
  switch (variant) {
    case "not-json":
      return { [REGISTRY_KEY]: `{"apiVersion": "${API_VERSION}", "apps": [` };
    case "port":
      return {
        [REGISTRY_KEY]: document(withFirst({ ...first, hostnames: ["shop.example.com:8080"] })),
      };
    case "duplicate-name":
      return { [REGISTRY_KEY]: document([...base, { ...first, hostnames: ["dup.example.com"] }]) };
    case "wrong-type":
      return {
        [REGISTRY_KEY]: JSON.stringify({
          apiVersion: API_VERSION,
          apps: base.map((a, i) =>
            i === 0 ? { ...appJson(a), hostnames: "shop.example.com" } : appJson(a),
          ),
        }),
      };
    case "no-hostnames":
      return { [REGISTRY_KEY]: document(withFirst({ ...first, hostnames: [] })) };
    case "api-version":
      return { [REGISTRY_KEY]: document(base).replace(API_VERSION, "replica-mirror/v2") };
    case "bad-secret-key":
      return {
        [REGISTRY_KEY]: document(withFirst({ ...first, secret: { ...first.secret, key: "a/b" } })),
      };
    case "key-missing":
      return { "other.json": document(base) };
    case "bad-gzip":
      return { [REGISTRY_KEY]: new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]) };
  }
}
