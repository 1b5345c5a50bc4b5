// The routing world of the end-to-end tests: envtest with the world's Apps and their Secrets, one
// echo upstream, and a sidecar on a fixed port (so that it can be replaced or stopped under the
// data plane), serving credentials unless a test replaces it.

import type { Envtest } from "@replica-mirror/envtest";
import { freePort } from "./data-plane.ts";
import { startEchoUpstream } from "./echo-upstream.ts";
import { startTestSidecar, type TestSidecar } from "./sidecar.ts";
import { waitUntil } from "./wait.ts";
import {
  APP_NS,
  type AppInput,
  envtestFor,
  writeRegistry,
  writeRegistryValue,
  writeSecret,
} from "./world.ts";

/** The hosts of the routing world, by what the sidecar answers for them. */
export const HOSTS = {
  /** `shop`: its Secret exists. */
  ready: "shop.example.com",
  /** `blog`: its Secret never exists. */
  secretMissing: "blog.example.com",
  /** `news`: its Secret appears when a test calls `createLaterSecret`. */
  later: "news.example.com",
  unknown: "nope.example.com",
  /** An IPv6 literal: a host every data plane forwards and the sidecar refuses. */
  bad: "[::1]",
  /** Under `*.edge.example.com`, two labels deep: App `edge`. */
  wildcard: "a.b.edge.example.com",
  /** `vault`: a credential with prefix `Bearer `, its value `CREDENTIALS[0]` until rotated. */
  credential: "vault.example.com",
  /** `bent`: a credential whose value holds a CR (secret-unusable). */
  unusable: "bent.example.com",
  /** `loop`: its upstream is the sidecar's own data listener (a name that resolves to the pod). */
  loop: "loop.example.com",
} as const;

/** The values of `vault`'s Secret, in the order a test writes them: markers, never to be seen. */
export const CREDENTIALS = ["MARKER-a9f3-vault-one", "MARKER-a9f3-vault-two"] as const;

/** The envtest world, its sidecar on a fixed port, and the Apps' upstream. */
export interface RoutingWorld {
  readonly envtest: Envtest;
  /** The Apps' upstream, as the Registry names it: `http://127.0.0.1:<port>`. */
  readonly upstream: string;
  /** The port of the sidecar's data listener, the same for the sidecar that replaces it. */
  readonly sidecarPort: number;
  /** Creates the Secret of the `news` App. */
  createLaterSecret(): void;
  /** Replaces the sidecar with one whose API server fails every list and watch: it never syncs. */
  replaceWithUnsynced(): Promise<void>;
  /** Writes `vault`'s Secret with this value (and a trailing line break, which is not sent). */
  writeCredential(value: string): void;
  /** Replaces the sidecar with one without `--serve-credentials true`; resolves once it is ready. */
  replaceWithoutCredentials(): Promise<void>;
  /** Stops the sidecar: nothing listens on `sidecarPort` afterwards. */
  stopSidecar(): Promise<void>;
  /** Writes a Registry value the sidecar refuses whole (the last good one stays in service). */
  writeRefusedRegistry(): void;
  /**
   * Writes the world's Registry again; resolves once the sidecar serves a Snapshot of it and every
   * proxy it keeps answers from that Snapshot (Caddy resets connections while it loads a table).
   */
  restoreRegistry(): Promise<void>;
  /** The API server goes away for `ms` and comes back; resolves once it is back. */
  apiServerGone(ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts envtest with the world's Apps (`shop` ready, also claimed by `shop-eu`, which loses the
 * conflict; `blog` without its Secret; `news` whose Secret comes later; `edge` under a wildcard;
 * `vault` and `bent` with a credential; `loop` routed to the sidecar), their upstream, and a synced
 * sidecar on a free port serving credentials, given `sidecarFlags`.
 */
export async function startRoutingWorld(
  options: { readonly sidecarFlags?: readonly string[] } = {},
): Promise<RoutingWorld> {
  const upstream = await startEchoUpstream();
  const envtest = await envtestFor();
  const sidecarPort = await freePort();
  writeSecret(envtest, APP_NS, "shop-credentials", { token: "shop-token" });
  writeSecret(envtest, APP_NS, "edge-credentials", { token: "edge-token" });
  const writeCredential = (value: string) =>
    writeSecret(envtest, APP_NS, "vault-credentials", { token: `${value}\n` });
  writeCredential(CREDENTIALS[0]);
  writeSecret(envtest, APP_NS, "bent-credentials", { token: `${CREDENTIALS[0]}\rX` });
  writeSecret(envtest, APP_NS, "loop-credentials", { token: "loop-token" });
  const bearer = { prefix: "Bearer " };
  const apps: AppInput[] = [
    { name: "shop", hostnames: [HOSTS.ready], namespace: APP_NS, upstream: upstream.url },
    {
      name: "shop-eu",
      hostnames: [HOSTS.ready],
      namespace: APP_NS,
      secret: "shop-credentials",
      upstream: "http://127.0.0.1:9",
    },
    { name: "blog", hostnames: [HOSTS.secretMissing], namespace: APP_NS, upstream: upstream.url },
    { name: "news", hostnames: [HOSTS.later], namespace: APP_NS, upstream: upstream.url },
    { name: "edge", hostnames: ["*.edge.example.com"], namespace: APP_NS, upstream: upstream.url },
    { name: "vault", hostnames: [HOSTS.credential], namespace: APP_NS, upstream: upstream.url },
    { name: "bent", hostnames: [HOSTS.unusable], namespace: APP_NS, upstream: upstream.url },
    {
      name: "loop",
      hostnames: [HOSTS.loop],
      namespace: APP_NS,
      upstream: `http://127.0.0.1:${sidecarPort}`,
    },
  ].map((a) => (a.name === "vault" || a.name === "bent" ? { ...a, credential: bearer } : a));
  writeRegistry(envtest, apps);
  const start = (serveCredentials = true) =>
    startTestSidecar(envtest, {
      flags: [
        "--listen",
        `127.0.0.1:${sidecarPort}`,
        "--serve-credentials",
        String(serveCredentials),
        ...(options.sidecarFlags ?? []),
      ],
    });
  let sidecar: TestSidecar | null = await start();
  await waitForReadyz(sidecar, 200);

  async function stopSidecar(): Promise<void> {
    const stopping = sidecar;
    sidecar = null;
    await stopping?.stop();
  }
  return {
    envtest,
    upstream: upstream.url,
    sidecarPort,
    createLaterSecret: () => writeSecret(envtest, APP_NS, "news-credentials", { token: "n" }),
    async replaceWithUnsynced() {
      await stopSidecar();
      // Streamed lists are watches (ADR 57): both fail, so it never syncs.
      for (const verb of ["list", "watch"] as const)
        envtest.faults.failNext({ verb, count: Number.MAX_SAFE_INTEGER, status: 500 });
      sidecar = await start();
      await waitForReadyz(sidecar, 503);
    },
    writeCredential,
    async replaceWithoutCredentials() {
      await stopSidecar();
      sidecar = await start(false);
      await waitForReadyz(sidecar, 200);
    },
    stopSidecar,
    writeRefusedRegistry: () => {
      writeRegistryValue(envtest, '{"apiVersion":"replica-mirror/v2","apps":[]}');
    },
    async restoreRegistry() {
      const current = sidecar;
      if (current === null) throw new Error("restoreRegistry needs a running sidecar");
      const before = await servedSnapshot(current);
      writeRegistry(envtest, apps);
      await waitUntil(
        async () => {
          const now = await servedSnapshot(current);
          return (
            now.revision > before.revision &&
            now.registry?.error === null &&
            now.proxies.every((p) => p.revision === now.revision)
          );
        },
        { timeoutMs: 10_000, intervalMs: 25, what: "the restored Registry served and pushed" },
      );
    },
    apiServerGone: (ms) => envtest.restart({ downMs: ms }),
    async close() {
      await stopSidecar();
      await envtest.close();
      await upstream.close();
    },
  };
}

interface ServedSnapshot {
  readonly revision: number;
  readonly registry: { readonly error: string | null } | null;
  readonly proxies: readonly { readonly revision: number | null }[];
}

async function servedSnapshot(sidecar: TestSidecar): Promise<ServedSnapshot> {
  const response = await fetch(`http://127.0.0.1:${sidecar.ops.port}/v1/snapshot`);
  return (await response.json()) as ServedSnapshot;
}

async function waitForReadyz(sidecar: TestSidecar, status: number): Promise<void> {
  await waitUntil(
    () => fetch(`http://127.0.0.1:${sidecar.ops.port}/readyz`).then((r) => r.status === status),
    { timeoutMs: 10_000, intervalMs: 25, what: `the sidecar's /readyz to answer ${status}` },
  );
}
