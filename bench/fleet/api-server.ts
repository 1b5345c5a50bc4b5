// The fleet's API server: envtest in a child process of its own, so that neither the harness's
// polling nor its bookkeeping stalls the server's event loop, driven over the IPC channel. The
// child (api-server-child.ts) seeds the world, writes, injects faults and hands back the request
// accounting of each phase.

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RequestSummary } from "@replica-mirror/envtest";
import { stopChild } from "../child.ts";
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

/** A request to the child. */
export interface CommandMessage {
  readonly id: number;
  readonly command: keyof Commands;
  readonly args: unknown;
}

/** The child's answer. */
export type AnswerMessage =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

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
  const child = fork(CHILD, [JSON.stringify(setup)], {
    execArgv: ["--max-old-space-size=8192"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const ready = await firstMessage<Ready>(child, timeoutMs);
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  child.on("message", (m: AnswerMessage) => {
    const w = waiting.get(m.id);
    if (w === undefined) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else w.reject(new Error(m.error));
  });
  child.once("exit", (code) => {
    for (const w of waiting.values()) w.reject(new Error(`API server exited with ${code}`));
    waiting.clear();
  });
  return {
    url: ready.url,
    pid: child.pid ?? 0,
    facts: ready.facts,
    call: (command, args, ms = 120_000) =>
      new Promise((resolve, reject) => {
        const id = next++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`API server: no answer to ${command} within ${ms} ms`));
        }, ms);
        waiting.set(id, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as never);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        child.send({ id, command, args } satisfies CommandMessage);
      }),
    close: async () => {
      process.off("exit", killOnExit);
      await stopChild(child, 5_000);
    },
  };
}

const CHILD = fileURLToPath(new URL("./api-server-child.ts", import.meta.url));

function firstMessage<T>(child: ChildProcess, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`API server not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code) => reject(new Error(`API server exited with ${code}`)));
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve(m as T);
    });
  });
}
