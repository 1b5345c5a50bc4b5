// `serve` as a command against envtest's demo world (`seedDemo`: `shop` served, `blog` without
// its Secret), for the tests of the CLI as a process: one envtest and scratch directory a file.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, seedDemo, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll } from "vitest";
import { HookSlot } from "./hook-slot.ts";
import { serveFlags } from "./serve-flags.ts";

export interface DemoServe {
  /** The file's scratch directory (the kubeconfig is in it), removed after its tests. */
  readonly dir: string;
  /** `serve` and its flags against the demo world, on free loopback ports, closing at once on SIGTERM. */
  serveArgs(): string[];
}

/** Registers the hooks that start the demo world before the calling file's tests and end it after. */
export function demoServe(): DemoServe {
  let envtest: Envtest | undefined;
  const dir = new HookSlot<string>("the demo world's directory");
  beforeAll(async () => {
    envtest = await startEnvtest();
    seedDemo(envtest);
    dir.set(await mkdtemp(join(tmpdir(), "replica-mirror-serve-")));
    await envtest.writeKubeconfig(join(dir.value, "kubeconfig"));
  });
  afterAll(async () => {
    await envtest?.close();
    if (dir.current !== undefined) await rm(dir.current, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir.value;
    },
    serveArgs: () => [
      "serve",
      ...serveFlags(join(dir.value, "kubeconfig"), "default", ["--shutdown-grace", "0"]),
    ],
  };
}
