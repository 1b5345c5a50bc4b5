// A server of a bench in a child process of its own, driven by commands over the IPC channel: the
// harness's polling and bookkeeping then stall neither the server's event loop nor its heap, nor
// the server's the harness's. The child sends one first message (what it serves), then answers
// each command by its id.

import { type ChildProcess, fork } from "node:child_process";
import { stopChild } from "./child.ts";

/** Each command's argument and answer. */
export type CommandSet<C> = { [K in keyof C]: readonly [unknown, unknown] };

/** A request to the child. */
export interface CommandMessage<C> {
  readonly id: number;
  readonly command: keyof C;
  readonly args: unknown;
}

/** The child's answer. */
export type AnswerMessage =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** The handle the harness holds. */
export interface CommandChild<C extends CommandSet<C>, R> {
  /** The child's first message. */
  readonly ready: R;
  readonly pid: number;
  call<K extends keyof C>(command: K, args: C[K][0], timeoutMs?: number): Promise<C[K][1]>;
  close(): Promise<void>;
}

/**
 * Forks `script` with `args` and resolves once it sent its first message (within `timeoutMs`);
 * the child is killed when the bench exits. `what` names it in errors.
 */
export async function startCommandChild<C extends CommandSet<C>, R>(
  what: string,
  script: string,
  args: readonly string[],
  o: { readonly execArgv?: readonly string[]; readonly timeoutMs: number },
): Promise<CommandChild<C, R>> {
  const child = fork(script, [...args], {
    execArgv: [...(o.execArgv ?? [])],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const ready = await firstMessage<R>(what, child, o.timeoutMs);
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
    for (const w of waiting.values()) w.reject(new Error(`${what} exited with ${code}`));
    waiting.clear();
  });
  return {
    ready,
    pid: child.pid ?? 0,
    call: (command, args, ms = 120_000) =>
      new Promise((resolve, reject) => {
        const id = next++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`${what}: no answer to ${String(command)} within ${ms} ms`));
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
        child.send({ id, command, args } satisfies CommandMessage<C>);
      }),
    close: async () => {
      process.off("exit", killOnExit);
      await stopChild(child, 5_000);
    },
  };
}

function firstMessage<T>(what: string, child: ChildProcess, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code) => reject(new Error(`${what} exited with ${code}`)));
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve(m as T);
    });
  });
}

/** Each command's handler, in the child. */
export type Handlers<C extends CommandSet<C>> = {
  [K in keyof C]: (a: C[K][0]) => Promise<C[K][1]>;
};

/**
 * The child's side: answers each command with its handler, sends `ready` as the first message,
 * and runs `close` then exits when the parent goes or sends SIGTERM.
 */
export function serveCommands<C extends CommandSet<C>>(
  handlers: Handlers<C>,
  ready: unknown,
  close: () => Promise<void>,
): void {
  process.on("message", (m: CommandMessage<C>) => {
    const handler = handlers[m.command] as (a: unknown) => Promise<unknown>;
    handler(m.args).then(
      (value) => process.send?.({ id: m.id, ok: true, value } satisfies AnswerMessage),
      (e: unknown) =>
        process.send?.({ id: m.id, ok: false, error: String(e) } satisfies AnswerMessage),
    );
  });
  const exit = () => void close().then(() => process.exit(0));
  process.on("disconnect", exit);
  process.on("SIGTERM", exit);
  process.send?.(ready);
}

/**
 * Milliseconds on the monotonic clock (`process.hrtime`), which every process of the machine
 * reads alike: a child's instant, sent over IPC, placed on the harness's timeline (`localTime`).
 */
export const sharedClockMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * This process's `performance.now()` at `ms` of `sharedClockMs`: both count the same clock, from
 * different origins (the two reads apart, a few µs).
 */
export const localTime = (ms: number) => ms - (sharedClockMs() - performance.now());
