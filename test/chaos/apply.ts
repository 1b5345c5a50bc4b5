/**
 * Applying operations to the cluster: an envtest API server whose world writes are recorded in
 * the model's History as they are made, whose faults are switched on and off, and which can be
 * restarted on the same port with the same state. The Registry values a write puts are built
 * here, good and bad, with the test kit's document builder.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { waitUntil } from "../support/wait.ts";
import {
  type AppInput,
  deleteRegistry,
  REGISTRY_API_VERSION,
  REGISTRY_KEY,
  registryDoc,
  writeRegistryData,
} from "../support/world.ts";
import { History } from "./history.ts";
import type { AppDef, RegistryValue } from "./model.ts";
import type { BadRegistry, Op } from "./ops.ts";

/** The API server of one run and the model's record of what was written to it. */
export class Cluster {
  readonly history = new History({ registry: { kind: "absent" }, registryRv: null });
  readonly #bookmarkIntervalMs: number;
  #envtest: Envtest | undefined;

  private constructor(envtest: Envtest, bookmarkIntervalMs: number) {
    this.#envtest = envtest;
    this.#bookmarkIntervalMs = bookmarkIntervalMs;
  }

  /** Starts an API server and writes `initial` to it. */
  static async start(initial: readonly Op[], bookmarkIntervalMs: number): Promise<Cluster> {
    const cluster = new Cluster(await startEnvtest({ bookmarkIntervalMs }), bookmarkIntervalMs);
    for (const op of initial) cluster.#write(op);
    return cluster;
  }

  /** The API server; throws while it is down for a restart. */
  get api(): Envtest {
    if (this.#envtest === undefined) throw new Error("API server down");
    return this.#envtest;
  }

  /** Applies one operation on the cluster (`quiesce` and `replica-restart` are the runner's). */
  async apply(op: Exclude<Op, { op: "quiesce" | "replica-restart" }>): Promise<void> {
    const faults = this.api.faults;
    switch (op.op) {
      case "registry":
      case "registry-bad":
      case "registry-delete":
      case "secret":
      case "secret-delete":
        this.#write(op);
        return;
      case "drop-watches":
        faults.dropWatches();
        return;
      case "end-watches":
        faults.endWatches();
        return;
      case "stall":
        faults.stall(op.on);
        return;
      case "compact":
        faults.compact();
        return;
      case "fail":
        faults.failNext({
          verb: op.verb,
          count: op.count,
          status: op.status,
          ...(op.retryAfterSeconds === undefined
            ? {}
            : { retryAfterSeconds: op.retryAfterSeconds }),
        });
        return;
      case "chunking":
        faults.chunking({ mode: op.mode, seed: op.seed });
        return;
      case "garbage":
        faults.injectGarbage(op.kind);
        return;
      case "latency":
        faults.setLatency(op.ms);
        return;
      case "restart":
        await this.#restart(op.downMs);
        return;
      case "wait":
        await sleep(op.ms);
        return;
    }
  }

  /** A world write, recorded in the History with the resourceVersion the server gave it. */
  #write(op: Op): void {
    const api = this.api;
    const h = this.history;
    switch (op.op) {
      case "registry": {
        const rv = writeRegistryData(api, goodRegistryData(op.apps, op.gzip));
        h.setRegistry({ kind: "good", apps: op.apps }, rv);
        return;
      }
      case "registry-bad": {
        const rv = writeRegistryData(api, badRegistryData(op.variant, op.apps));
        h.setRegistry(badRegistryValue(op.variant, op.apps), rv);
        return;
      }
      case "registry-delete":
        if (deleteRegistry(api)) h.setRegistry({ kind: "absent" }, null);
        return;
      case "secret": {
        const obj = api.apply({ namespace: op.namespace, name: op.name, data: op.data });
        h.setSecret(op.namespace, op.name, {
          data: op.data,
          rv: obj.metadata.resourceVersion ?? "",
        });
        return;
      }
      case "secret-delete":
        if (api.delete(op.namespace, op.name)) h.setSecret(op.namespace, op.name, undefined);
        return;
      default:
        throw new Error(`not a write: ${op.op}`);
    }
  }

  /** Closes the server, waits `downMs`, and starts it again on its port with its state. */
  async #restart(downMs: number): Promise<void> {
    const { port, state } = this.api;
    const old = this.api;
    this.#envtest = undefined;
    await old.close();
    await sleep(downMs);
    // The port may still be held for a moment after the close.
    this.#envtest = await waitUntil(
      () => startEnvtest({ port, state, bookmarkIntervalMs: this.#bookmarkIntervalMs }),
      { timeoutMs: 2_000, intervalMs: 100, what: `the API server back on port ${port}` },
    );
  }

  async close(): Promise<void> {
    await this.#envtest?.close();
  }
}

/** An App of the generator as the kit's document builder takes it. */
function appInput(a: AppDef): AppInput {
  return {
    name: a.name,
    hostnames: a.hostnames,
    ...(a.secret.namespace === null ? {} : { namespace: a.secret.namespace }),
    secret: a.secret.name,
    key: a.secret.key,
    ...(a.upstream === null ? {} : { upstream: a.upstream }),
    ...(a.credential === null ? {} : { credential: a.credential }),
    // Forward compatibility: unknown fields are ignored, and so is the leader's readiness.
    ...(a.extras
      ? { extra: { secretReady: a.name.length % 2 === 0, labels: { tier: "gold" }, x: 1 } }
      : {}),
  };
}

const document = (apps: readonly AppDef[], extra: Record<string, unknown> = {}) =>
  registryDoc(apps.map(appInput), extra);

const FALLBACK: AppDef = {
  name: "shop",
  hostnames: ["shop.example.com"],
  secret: { namespace: "tenant-a", name: "shop-credentials", key: "token" },
  upstream: null,
  credential: null,
  extras: false,
};

/** The Registry Secret's data for a good document. */
export function goodRegistryData(
  apps: readonly AppDef[],
  gzip: boolean,
): Record<string, string | Uint8Array> {
  const json = JSON.stringify(document(apps, apps.some((a) => a.extras) ? { generation: 7 } : {}));
  return { [REGISTRY_KEY]: gzip ? new Uint8Array(gzipSync(json)) : json };
}

/** A refused value as the model sees it: refused whole, or one App entry refused alone. */
export function badRegistryValue(variant: BadRegistry, apps: readonly AppDef[]): RegistryValue {
  const base = apps.length > 0 ? [...apps] : [FALLBACK];
  const first = base[0]!;
  switch (variant) {
    case "duplicate-name":
      return { kind: "partial", variant, apps: base, refused: first.name };
    case "port":
    case "wrong-type":
    case "no-hostnames":
    case "bad-secret-key":
      return { kind: "partial", variant, apps: base.slice(1), refused: first.name };
    default:
      return { kind: "bad", variant };
  }
}

/** The Registry Secret's data for a value the contract refuses, whole or in one App entry. */
export function badRegistryData(
  variant: BadRegistry,
  apps: readonly AppDef[],
): Record<string, string | Uint8Array> {
  const base = apps.length > 0 ? [...apps] : [FALLBACK];
  const first = base[0]!;
  const withFirst = (a: AppDef) => JSON.stringify(document([a, ...base.slice(1)]));
  switch (variant) {
    case "not-json":
      return { [REGISTRY_KEY]: `{"apiVersion": "${REGISTRY_API_VERSION}", "apps": [` };
    case "port":
      return { [REGISTRY_KEY]: withFirst({ ...first, hostnames: ["shop.example.com:8080"] }) };
    case "duplicate-name":
      return {
        [REGISTRY_KEY]: JSON.stringify(
          document([...base, { ...first, hostnames: ["dup.example.com"] }]),
        ),
      };
    case "wrong-type": {
      const doc = document(base);
      doc.apps[0] = { ...doc.apps[0], hostnames: "shop.example.com" };
      return { [REGISTRY_KEY]: JSON.stringify(doc) };
    }
    case "no-hostnames":
      return { [REGISTRY_KEY]: withFirst({ ...first, hostnames: [] }) };
    case "api-version":
      return {
        [REGISTRY_KEY]: JSON.stringify({ ...document(base), apiVersion: "replica-mirror/v2" }),
      };
    case "bad-secret-key":
      return { [REGISTRY_KEY]: withFirst({ ...first, secret: { ...first.secret, key: "a/b" } }) };
    case "key-missing":
      return { "other.json": JSON.stringify(document(base)) };
    case "bad-gzip":
      return { [REGISTRY_KEY]: new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]) };
  }
}
