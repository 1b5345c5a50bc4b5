// HAProxy's runtime API (the stats socket at level admin) in interactive mode: one connection,
// `prompt` sent first, then commands, each answer ending with the "> " prompt. A payload command
// (`add map ... <<`) ends with an empty line; HAProxy prompts "+ " for each of its lines.

import { connect, type NetConnectOpts } from "node:net";
import { err, ok, type Result } from "../result.ts";
import type { PushFailure } from "./target.ts";

/** Where the stats socket listens: a Unix socket path, or a TCP address (`ipv4@` binds). */
export type RuntimeAddress =
  | { readonly path: string }
  | { readonly host: string; readonly port: number };

/** One interactive connection; calls run one at a time. */
export interface RuntimeSession {
  /** The command's answer without prompts, trimmed: empty for a command that succeeded silently. */
  command(command: string): Promise<Result<string, PushFailure>>;
  /**
   * Sends all `commands` at once (HAProxy runs them in order, each within one buffer) and
   * resolves with their answers, as `command` gives them, once every one has come.
   */
  pipeline(commands: readonly string[]): Promise<Result<string[], PushFailure>>;
  close(): void;
}

const PROMPT = "\n> ";

/**
 * Opens a session: `unreachable` when nothing listens, `timeout` when HAProxy does not prompt
 * within `timeoutMs`; each command then gets `timeoutMs` for its answer. Never rejects; after a
 * failure every further call fails the same way.
 */
export async function openRuntimeSession(
  address: RuntimeAddress,
  timeoutMs: number,
): Promise<Result<RuntimeSession, PushFailure>> {
  const options: NetConnectOpts = "path" in address ? { path: address.path } : { ...address };
  const socket = connect(options);
  let buffer = "";
  let failure: PushFailure | null = null;
  let wake: (() => void) | null = null;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    wake?.();
  });
  socket.on("error", (e: NodeJS.ErrnoException) => {
    const reason = e.code === "ECONNREFUSED" || e.code === "ENOENT" ? "unreachable" : "protocol";
    failure ??= { reason, message: e.message };
    wake?.();
  });
  socket.on("close", () => {
    failure ??= { reason: "protocol", message: "the runtime API closed the connection" };
    wake?.();
  });

  /** Sends `text` and waits for `answers` prompts, each ending one command's answer. */
  async function exchange(
    text: string,
    what: string,
    answers: number,
  ): Promise<Result<string[], PushFailure>> {
    if (failure !== null) return err(failure);
    buffer = "";
    socket.write(text);
    const deadline = Date.now() + timeoutMs * answers;
    while (prompts(buffer) < answers && failure === null) {
      const left = deadline - Date.now();
      if (left <= 0) {
        failure = { reason: "timeout", message: `no answer in ${timeoutMs * answers} ms` };
        break;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
    if (failure !== null) return err({ ...failure, message: `'${what}': ${failure.message}` });
    // The answer to `prompt` is "> " alone; every other answer ends with a line break and "> ".
    const pieces = (buffer.startsWith("> ") ? `\n${buffer}` : buffer).split(PROMPT);
    return ok(pieces.slice(0, answers).map((p) => p.replace(/^(\+ )+/, "").trim()));
  }

  const prompted = await exchange("prompt\n", "prompt", 1);
  if (!prompted.ok) {
    socket.destroy();
    return prompted;
  }
  return ok({
    async command(command) {
      const answered = await exchange(line(command), verb(command), 1);
      return answered.ok ? ok(answered.value[0]!) : answered;
    },
    pipeline(commands) {
      const what = `${verb(commands[0] ?? "")} and ${commands.length - 1} more`;
      return exchange(commands.map(line).join(""), what, commands.length);
    },
    close() {
      socket.end("quit\n");
      socket.destroySoon();
    },
  });
}

/** How many answers `buffer` holds so far: the prompts that end them. */
function prompts(buffer: string): number {
  let count = buffer.startsWith("> ") ? 1 : 0;
  for (let at = buffer.indexOf(PROMPT); at !== -1; at = buffer.indexOf(PROMPT, at + 1)) count++;
  return count;
}

const line = (command: string) => (command.endsWith("\n") ? command : `${command}\n`);

/** The command's first words, for messages: never its payload. */
function verb(command: string): string {
  return command.split("\n", 1)[0]!.replace(/ <<$/, "").slice(0, 120);
}
