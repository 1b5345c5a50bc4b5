// The fleet's API server: envtest in a child process of its own, so that neither the harness's
// polling nor its bookkeeping stalls the server's event loop, driven over the IPC channel. The
// child (api-server-child.ts) seeds the world, writes, injects faults and hands back the request
// accounting of each phase.

import { fileURLToPath } from "node:url";
import type { RequestSummary } from "@replica-mirror/envtest";
import { startCommandChild } from "../command-child.ts";
import type { WorldFacts, WorldSize } from "./world.ts";

/** One request of the phase, as the accounting needs it. */
export interface Req {
  readonly client: string;
  readonly verb: string;
  /** Milliseconds since the epoch at arrival; `durationMs` once it ended. */
  readonly time: number;
  readonly durationMs?: number;
  readonly status?: number;
  readonly objects: number;
  readonly bytes: number;
  readonly listRead?: string;
  /** A list page after the first (it carried a continue token). */
  readonly continued: boolean;
  /** A watch served as a streaming list (sendInitialEvents=true, not refused). */
  readonly streamedList: boolean;
  /** On the Registry Secret (its namespace and name selector), not the App Secrets. */
  readonly registry: boolean;
  /** A list selecting one name (`fieldSelector=metadata.name=`): a GET that honours a label selector. */
  readonly byName: boolean;
  /** Which reflector it belongs to: path and selectors. */
  readonly stream: string;
  readonly watchError?: number;
  readonly timeoutSeconds?: number;
  readonly resourceVersion?: string;
}

/** What a phase cost the API server. */
export interface Collected {
  readonly summary: RequestSummary;
  readonly requests: readonly Req[];
  /** The server process's event-loop utilisation and CPU time over the phase. */
  readonly eventLoopBusy: number;
  readonly cpuMs: number;
  /** When it was collected, ms since the epoch. */
  readonly now: number;
}

/** The commands the child answers, with their arguments and answers. */
export interface Commands {
  /** Starts a new accounting phase; answers its start time. */
  clear: [Record<string, never>, { now: number }];
  collect: [Record<string, never>, Collected];
  /** Writes the Registry with Apps `0 .. apps-1`; answers the bytes of the Apps from `from`. */
  registry: [
    { apps: number; from: number },
    { resourceVersion: string; registryBytes: number; appSecretsBytes: number; now: number },
  ];
  /** Rewrites App `app`'s Secret. */
  touch: [{ app: number }, { resourceVersion: string; now: number }];
  churn: [
    { referencedPerSecond: number; unrelatedPerSecond: number; durationMs: number },
    { referenced: number; unrelated: number },
  ];
  restart: [{ downMs: number }, { downAt: number; upAt: number }];
  throttle: [
    { share: number; retryAfterSeconds: number; forMs: number; seed: number },
    { from: number; until: number },
  ];
  /** Switches the API server's WatchList feature gate (streaming lists) for later requests. */
  featureGates: [{ WatchList: boolean }, { WatchList: boolean }];
  /** Ends every watch cleanly, history kept: every reflector resumes. */
  endWatches: [Record<string, never>, { watches: number; now: number }];
  reset: [Record<string, never>, { now: number }];
}

/** What the child is started with, as its one argument (JSON). */
export interface ChildSetup {
  readonly size: WorldSize;
  readonly keepEntries: number;
}

/** The first message of the child: where it serves and what it seeded. */
export interface Ready {
  readonly url: string;
  readonly facts: WorldFacts;
}

/** The handle the harness holds. */
export interface ApiServer {
  readonly url: string;
  /** The child process serving the API: its memory is what a client costs the API server. */
  readonly pid: number;
  readonly facts: WorldFacts;
  call<K extends keyof Commands>(
    command: K,
    args: Commands[K][0],
    timeoutMs?: number,
  ): Promise<Commands[K][1]>;
  close(): Promise<void>;
}

/** Starts envtest in a child process and seeds the world (bounded by `timeoutMs`). */
export async function startApiServer(setup: ChildSetup, timeoutMs = 600_000): Promise<ApiServer> {
  const child = await startCommandChild<Commands, Ready>(
    "API server",
    CHILD,
    [JSON.stringify(setup)],
    { execArgv: ["--max-old-space-size=8192"], timeoutMs },
  );
  return {
    url: child.ready.url,
    pid: child.pid,
    facts: child.ready.facts,
    call: child.call,
    close: child.close,
  };
}

const CHILD = fileURLToPath(new URL("./api-server-child.ts", import.meta.url));
