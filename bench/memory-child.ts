// Child process for the memory figure, run with --expose-gc against an envtest in the parent:
//   mirror    the sidecar, started with `startSidecar` as `serve` starts it
//   informer  @kubernetes/client-node's own makeInformer on every Secret, holding its cache
// Messages: "measure" answers the memory after full collections; {app, resourceVersion} answers
// once the mirror serves that App Secret version (all earlier events were read, in order);
// {count} answers once the informer's cache holds that many Secrets.

import { CoreV1Api, KubeConfig, makeInformer, type V1Secret } from "@kubernetes/client-node";
import { pino } from "pino";
import { parseServeConfig } from "../src/cli/config.ts";
import { startSidecar } from "../src/sidecar/sidecar.ts";
import { findApp } from "../src/snapshot/lookup.ts";

export interface MemoryReading {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
}

/** After regular full collections, and after collections that also release free heap pages. */
export interface MemoryReadings {
  readonly regular: MemoryReading;
  readonly compacted: MemoryReading;
}

type Message = "measure" | { app: string; resourceVersion: string } | { count: number };

const [mode, kubeconfigPath, registryNamespace] = process.argv.slice(2) as [string, string, string];
const gc = (globalThis as { gc?: (options?: object) => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

let settled: (m: Exclude<Message, "measure">) => boolean;
if (mode === "mirror") {
  const config = parseServeConfig(
    [
      "--kubeconfig",
      kubeconfigPath,
      "--registry-namespace",
      registryNamespace,
      "--listen",
      "127.0.0.1:0",
      "--ops-listen",
      "127.0.0.1:0",
    ],
    {},
  );
  if (!config.ok) throw new Error(config.error);
  const started = await startSidecar(config.value, { logger: pino({ level: "silent" }) });
  if (!started.ok) throw new Error(started.error);
  const { holder, mirror } = started.value;
  await until(() => holder.current() !== null);
  await mirror.idle();
  settled = (m) => {
    const s = holder.current();
    return (
      "app" in m && s !== null && findApp(s, m.app)?.secretResourceVersion === m.resourceVersion
    );
  };
} else {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Secret>(kc, "/api/v1/secrets", () =>
    api.listSecretForAllNamespaces(),
  );
  informer.on("error", () => setTimeout(() => void informer.start(), 100));
  await informer.start();
  settled = (m) => "count" in m && informer.list().length === m.count;
}

process.on("message", async (m: Message) => {
  if (m === "measure") {
    const reading = (): MemoryReading => {
      const u = process.memoryUsage();
      return { rss: u.rss, heapUsed: u.heapUsed, heapTotal: u.heapTotal, external: u.external };
    };
    // Several passes with turns in between, so weak callbacks and finalizers run too.
    for (let i = 0; i < 4; i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    const regular = reading();
    // V8's "last resort" collection also gives free heap pages back to the system: after a
    // regular one, pages that a burst of garbage touched stay resident though nothing is held.
    for (let i = 0; i < 2; i++) {
      gc({ type: "major", execution: "sync", flavor: "last-resort" });
      await new Promise((r) => setImmediate(r));
    }
    const answer: MemoryReadings = { regular, compacted: reading() };
    process.send?.(answer);
    return;
  }
  await until(() => settled(m), 300_000);
  process.send?.("settled");
});
process.on("disconnect", () => process.exit(0));
process.send?.("ready");

async function until(check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
