// A data plane in hop mode in front of a routing world's sidecar, for one `describe`: the world, a
// scratch directory and a free port before its tests, everything stopped after them.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import {
  type DataPlaneProcess,
  findPlane,
  freePort,
  type PlaneKind,
  type PlaneSetup,
  startDataPlane,
  writeShippedConfig,
} from "./data-plane.ts";
import { HookSlot } from "./hook-slot.ts";
import { type RoutingWorld, startRoutingWorld } from "./routing-world.ts";
import type { Tool } from "./tools.ts";

/** A data plane with its shipped configuration: where Debian installs it, and how it starts. */
export interface ShippedPlane {
  readonly binary: Tool;
  /** Writes the shipped configuration, adapted to `setup`, and starts the data plane. */
  start(binary: string, setup: PlaneSetup): Promise<DataPlaneProcess>;
}

/** The data plane `kind` as it ships (manifests/), found where Debian installs it. */
export function shippedPlane(kind: PlaneKind): ShippedPlane {
  return {
    binary: findPlane(kind),
    async start(binary, setup) {
      const launch = await writeShippedConfig(kind, setup);
      return startDataPlane(binary, launch.args, setup.port, launch.env);
    },
  };
}

/** What a suite reads once its `beforeAll` ran. */
export interface PlaneInFront {
  readonly world: RoutingWorld;
  /** Where the data plane listens. */
  readonly port: number;
}

/** What the caller started: the data plane, and anything stopped after it (a relay). */
export interface StartedPlane {
  readonly plane: DataPlaneProcess;
  readonly alsoStop?: () => Promise<void>;
}

/**
 * Registers, in the calling `describe`, a routing world and the data plane `start` puts in front
 * of its sidecar (given the world, a free port and a scratch directory); stopped in reverse order.
 */
export function planeInFront(
  start: (world: RoutingWorld, at: { port: number; dir: string }) => Promise<StartedPlane>,
): PlaneInFront {
  const world = new HookSlot<RoutingWorld>("the routing world");
  const port = new HookSlot<number>("the data plane's port");
  let started: StartedPlane | undefined;
  let dir: string | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-e2e-"));
    world.set(await startRoutingWorld());
    port.set(await freePort());
    started = await start(world.value, { port: port.value, dir });
  }, 30_000);

  afterAll(async () => {
    await started?.plane.stop();
    await started?.alsoStop?.();
    await world.current?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  return {
    get world() {
      return world.value;
    },
    get port() {
      return port.value;
    },
  };
}

/** Something between a data plane and the sidecar (a relay, a recorder): its port, its stop. */
export interface Between {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * `planeInFront` with the shipped data plane (`binary`) reaching the sidecar through what
 * `between` starts on the sidecar's port; `between` reads it once the suite's hook ran.
 */
export function shippedPlaneThrough<T extends Between>(
  shipped: ShippedPlane,
  binary: string,
  start: (sidecarPort: number) => Promise<T>,
): PlaneInFront & { readonly between: T } {
  const between = new HookSlot<T>("what stands between the data plane and the sidecar");
  const s = planeInFront(async (world, at) => {
    between.set(await start(world.sidecarPort));
    return {
      plane: await shipped.start(binary, { ...at, sidecarPort: between.value.port }),
      alsoStop: () => between.value.close(),
    };
  });
  return {
    get world() {
      return s.world;
    },
    get port() {
      return s.port;
    },
    get between() {
      return between.value;
    },
  };
}
