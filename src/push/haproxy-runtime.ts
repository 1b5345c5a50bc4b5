// HAProxy's runtime API (the stats socket at level admin) in its non-interactive mode: one
// connection per command, which HAProxy answers and then closes. A payload command
// (`add map ... <<`) ends with an empty line.
//
// Not the interactive mode (`prompt`): there HAProxy answers every line of a payload with a
// "+ " prompt, and a push of 10k Apps took 50–65 ms against 30–40 ms one connection per command
// (HAProxy 2.6, 43 payloads of 12 kB).

import { connect } from "node:net";
import { err, ok, type Result } from "../result.ts";
import type { PushFailure } from "./target.ts";

/**
 * Runs one command on the stats socket at `socket` (a Unix socket path): its answer, trimmed
 * (empty for a command that succeeded silently), or with `keepSpaces` only its trailing line
 * breaks removed (a map's last value may end in spaces); `unreachable` when nothing listens,
 * `timeout` when HAProxy has not answered and closed within `timeoutMs`, `protocol` when the
 * connection fails. Never rejects.
 */
export async function runtimeCommand(
  socket: string,
  command: string,
  timeoutMs: number,
  keepSpaces = false,
): Promise<Result<string, PushFailure>> {
  const answer = await runtimeAnswer(socket, command, timeoutMs);
  if (!answer.ok) return answer;
  const text = answer.value.toString("utf8");
  return ok(keepSpaces ? text.replace(/\n+$/, "") : text.trim());
}

/** `runtimeCommand`'s answer as HAProxy wrote it, bytes untouched (a map of 10 MB: not decoded). */
export function runtimeAnswer(
  socket: string,
  command: string,
  timeoutMs: number,
): Promise<Result<Buffer, PushFailure>> {
  return new Promise((resolve) => {
    const connection = connect({ path: socket });
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (result: Result<Buffer, PushFailure>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(result);
    };
    const failed = (reason: PushFailure["reason"], message: string) =>
      settle(err({ reason, message: `'${verb(command)}': ${message}` }));
    const timer = setTimeout(() => failed("timeout", `no answer in ${timeoutMs} ms`), timeoutMs);
    connection.on("data", (chunk: Buffer) => chunks.push(chunk));
    connection.on("end", () => settle(ok(Buffer.concat(chunks))));
    connection.on("error", (e: NodeJS.ErrnoException) =>
      failed(
        e.code === "ECONNREFUSED" || e.code === "ENOENT" ? "unreachable" : "protocol",
        e.message,
      ),
    );
    connection.on("close", () => failed("protocol", "the runtime API closed the connection"));
    // Not end(): HAProxy 2.6 may drop what it has not parsed yet once the client shuts its side.
    connection.write(command.endsWith("\n") ? command : `${command}\n`);
  });
}

/** The command's first words, for messages: never its payload. */
function verb(command: string): string {
  return command.split("\n", 1)[0]!.replace(/ <<$/, "").slice(0, 120);
}
