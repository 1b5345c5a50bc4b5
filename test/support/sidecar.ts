// A sidecar in the test's own process, assembled by `startSidecar` from `serve` flags exactly as
// the CLI assembles it, with the reflector timings shortened for tests (same policy shape).

import type { Envtest } from "@replica-mirror/envtest";
import type { Logger } from "pino";
import { parseServeConfig } from "../../src/cli/config.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import type { MirrorObserver } from "../../src/mirror/observer.ts";
import type { SidecarConfig } from "../../src/sidecar/config.ts";
import { type Sidecar, type SidecarOptions, startSidecar } from "../../src/sidecar/sidecar.ts";
import type { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { memoryLogger } from "./log-sink.ts";
import { serveFlags } from "./serve-flags.ts";
import { kubeconfigFor, REGISTRY_NS } from "./world.ts";

/** Backoff and deadlines fast enough for failure tests to converge in test time. */
const FAST_REFLECTOR: NonNullable<SidecarOptions["reflector"]> = {
  backoff: { initialMs: 50, capMs: 400 },
  inactivityGraceMs: 500,
  relistSpreadMs: 200,
};

export interface TestSidecarOptions {
  /** `serve` flags on top of the test defaults (kubeconfig, Registry namespace, port 0). */
  readonly flags?: readonly string[];
  /** Default "silent"; the log is kept in memory either way. */
  readonly logLevel?: SidecarConfig["logLevel"] | "silent";
  readonly watchTimeoutSeconds?: number;
  readonly observer?: MirrorObserver;
  /** Default FAST_REFLECTOR; `"production"` keeps the production backoff. */
  readonly reflector?: SidecarOptions["reflector"] | "production";
  readonly logger?: Logger;
}

export interface TestSidecar extends Sidecar {
  /** http://127.0.0.1:PORT of the data listener. */
  readonly url: string;
  /** Every log line written so far (JSON text), when the test did not pass its own logger. */
  lines(): string[];
  /** Closes the sidecar and removes its kubeconfig. */
  stop(): Promise<void>;
}

/** The config `serve` would parse from the test defaults and `flags`. */
function testConfig(kubeconfigPath: string, flags: readonly string[] = []): SidecarConfig {
  const parsed = parseServeConfig(
    serveFlags(kubeconfigPath, REGISTRY_NS, ["--watch-timeout", "2", ...flags]),
    {},
  );
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** Starts a sidecar against `envtest`; throws when it cannot start. */
export async function startTestSidecar(
  envtest: Envtest,
  options: TestSidecarOptions = {},
): Promise<TestSidecar> {
  const kubeconfig = await kubeconfigFor(envtest);
  const flags = [
    ...(options.watchTimeoutSeconds === undefined
      ? []
      : ["--watch-timeout", String(options.watchTimeoutSeconds)]),
    ...(options.logLevel === undefined || options.logLevel === "silent"
      ? []
      : ["--log-level", options.logLevel]),
    ...(options.flags ?? []),
  ];
  const config = testConfig(kubeconfig.path, flags);
  const memory = memoryLogger(options.logLevel ?? "silent");
  const reflector = options.reflector ?? FAST_REFLECTOR;
  // What a process learns of streaming lists is its own: so is each test sidecar's.
  const streamingLists = new StreamingLists();
  const started = await startSidecar(config, {
    logger: options.logger ?? memory.logger,
    drainMs: 500,
    reflector: { ...(reflector === "production" ? {} : reflector), streamingLists },
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });
  if (!started.ok) {
    await kubeconfig.remove();
    throw new Error(started.error);
  }
  const sidecar = started.value;
  return {
    ...sidecar,
    url: `http://127.0.0.1:${sidecar.data.port}`,
    lines: memory.lines,
    async stop() {
      await sidecar.close();
      await kubeconfig.remove();
    },
  };
}

/** The readiness and decoded value of an App in the current Snapshot. */
export function appState(
  holder: SnapshotHolder,
  name: string,
): { ready: boolean; value: string | null; reason: string | null } | "absent" | "not-synced" {
  const snapshot = holder.current();
  if (snapshot === null) return "not-synced";
  const app = findApp(snapshot, name);
  if (app === undefined) return "absent";
  return {
    ready: app.ready,
    value:
      app.secretValue === null ? null : Buffer.from(app.secretValue, "latin1").toString("utf8"),
    reason: app.reason,
  };
}
