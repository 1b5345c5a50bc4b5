// A `serve` process routing a few Apps, a load generator, and the file of hosts it asks for: what
// the data listener's flood tests measure routing with. Everything listens on 127.0.0.1.

import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadGenerator, startLoadGenerator } from "../../bench/load.ts";
import { get } from "./http.ts";
import { type ProcessWorld, startProcessWorld } from "./process-world.ts";
import { waitUntil } from "./wait.ts";
import { APP_NS } from "./world.ts";

export interface RoutedLoad {
  readonly world: ProcessWorld;
  readonly load: LoadGenerator;
  /** One App's host a line, for the load generator. */
  readonly hostsFile: string;
  close(): Promise<void>;
}

/** The host of App `i` of `apps`. */
export const appHost = (apps: number, i: number): string => `app-${i % apps}.example.com`;

/** `apps` Apps routed by a sidecar started with `flags`, every App answered 200 before it returns. */
export async function startRoutedLoad(
  apps: number,
  flags: readonly string[] = [],
): Promise<RoutedLoad> {
  const specs = Array.from({ length: apps }, (_, i) => ({
    name: `app-${i}`,
    hostnames: [appHost(apps, i)],
    namespace: APP_NS,
    upstream: `http://app-${i}.${APP_NS}.svc:8080`,
  }));
  const hostsFile = join(tmpdir(), `replica-mirror-routed-hosts-${process.pid}-${Date.now()}.txt`);
  writeFileSync(hostsFile, `${specs.map((a) => a.hostnames[0]).join("\n")}\n`);
  const world = await startProcessWorld(specs, flags);
  await waitUntil(
    async () =>
      (await get(world.sidecar.dataPort, "/v1/route", { host: appHost(apps, apps - 1) })).status ===
      200,
    { what: "the sidecar to route every App" },
  );
  const load = await startLoadGenerator();
  return {
    world,
    load,
    hostsFile,
    async close() {
      await load.close();
      await world.close();
      rmSync(hostsFile, { force: true });
    },
  };
}
