// The routing contract through a real proxy in zero-hop mode: the same cases as hop mode's
// (contract.ts), the sidecar keeping the proxy's table, and what a proxy does without its sidecar.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientAnswer, through, throughWithHeaders } from "../support/data-plane.ts";
import { PUSHED_WITHIN_MS } from "../support/margins.ts";
import { HOSTS, type RoutingWorld, startRoutingWorld } from "../support/routing-world.ts";
import type { Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { type ClientAnswers, contractCases } from "./contract.ts";
import { type CredentialAnswers, credentialCases } from "./contract-credentials.ts";
import { echoedOf, type MirrorHeader } from "./contract-trust.ts";

/** A proxy in zero-hop mode, as a suite starts it. */
export interface ZeroHopPlane {
  readonly port: number;
  /** The `--push-*` flags that point a sidecar at it. */
  readonly sidecarFlags: readonly string[];
  /** Stops it and starts it again: it holds no table then. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

interface ZeroHopPlaneSpec {
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopPlane>;
  readonly answers: Omit<ClientAnswers, "sidecarDown"> & CredentialAnswers;
  readonly upstreamHeaders: readonly MirrorHeader[];
}

/**
 * Runs the same contract through `spec`'s proxy in zero-hop mode: the sidecar keeps the proxy's
 * table (`--push-*`), and the proxy answers every request from it. A proxy that holds no table
 * answers not-synced; one that lost its sidecar or the API server keeps its table.
 */
export function describeZeroHopDataPlane(spec: ZeroHopPlaneSpec): void {
  const title = `${spec.name} in zero-hop mode, kept by the sidecar against envtest`;
  const binary = spec.binary.path;
  if (binary === undefined) {
    describe(title, () => {
      // Skipped only where the proxy binary is not installed (the title says which); CI installs
      // it (.ci/run), so there it runs.
      it.skip(`runs the routing contract (${spec.binary.missing})`, () => {});
    });
    return;
  }

  describe(title, () => {
    let world: RoutingWorld;
    let plane: ZeroHopPlane;
    let dir: string;
    let beforeFirstPush: ClientAnswer;
    const ask = (r: Parameters<typeof through>[1]) => through(plane.port, r);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-e2e-"));
      plane = await spec.start(binary, dir);
      beforeFirstPush = await ask({ host: HOSTS.ready });
      world = await startRoutingWorld({ sidecarFlags: plane.sidecarFlags });
      await waitUntil(async () => (await ask({ host: HOSTS.ready })).status === 200, {
        timeoutMs: 10_000,
        what: "the first push",
      });
    }, 60_000);

    afterAll(async () => {
      await world?.close();
      await plane?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("answers not-synced before the sidecar's first push", () => {
      expect(beforeFirstPush).toEqual(spec.answers.notSynced);
    });

    const context = {
      ask,
      world: () => world,
      answers: { ...spec.answers, sidecarDown: spec.answers.notSynced },
      upstreamHeaders: spec.upstreamHeaders,
    };
    contractCases(context);
    // Hop mode's credential cases (ADR 53); the last leaves a sidecar without
    // --serve-credentials, which keeps the table of the cases below.
    credentialCases({
      ...context,
      credentialAnswers: spec.answers,
      exchange: (r) => throughWithHeaders(plane.port, r),
    });

    it("gets its table back at the next revision check after a restart", async () => {
      await plane.restart();
      const restarted = performance.now();
      await waitUntil(async () => (await ask({ host: HOSTS.ready })).status === 200, {
        timeoutMs: 5_000,
        intervalMs: 20,
        what: "the table pushed again",
      });
      expect(performance.now() - restarted).toBeLessThan(PUSHED_WITHIN_MS);
    });

    it("keeps routing from its own table with the sidecar stopped", async () => {
      await world.stopSidecar();
      expect(echoedOf(await ask({ host: HOSTS.ready }))).toMatchObject({ app: "shop" });
    });
  });
}
