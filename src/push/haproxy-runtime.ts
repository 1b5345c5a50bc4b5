// HAProxy's runtime API (the stats socket at level admin): one command per connection, the answer
// read to the end, as `socat` does. A payload command (`add map ... <<`) ends with an empty line.

import { connect, type NetConnectOpts } from "node:net";
import { err, ok, type Result } from "../result.ts";
import type { PushFailure } from "./target.ts";

/** Where the stats socket listens: a Unix socket path, or a TCP address (`ipv4@` binds). */
export type RuntimeAddress =
  | { readonly path: string }
  | { readonly host: string; readonly port: number };

/**
 * Sends one command (with its payload, if any) and resolves with HAProxy's whole answer, or why
 * none came: `unreachable` when nothing listens, `timeout` after `timeoutMs` without the end of
 * the answer. Never rejects.
 */
export function runtimeCommand(
  address: RuntimeAddress,
  command: string,
  timeoutMs: number,
): Promise<Result<string, PushFailure>> {
  return new Promise((resolve) => {
    const options: NetConnectOpts = "path" in address ? { path: address.path } : { ...address };
    const socket = connect(options);
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (result: Result<string, PushFailure>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        settle(
          err({ reason: "timeout", message: `no answer to '${verb(command)}' in ${timeoutMs} ms` }),
        ),
      timeoutMs,
    );
    socket.on("connect", () => socket.end(command.endsWith("\n") ? command : `${command}\n`));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => settle(ok(Buffer.concat(chunks).toString("utf8"))));
    socket.on("error", (e: NodeJS.ErrnoException) =>
      settle(
        err({
          reason: e.code === "ECONNREFUSED" || e.code === "ENOENT" ? "unreachable" : "protocol",
          message: `'${verb(command)}': ${e.message}`,
        }),
      ),
    );
  });
}

/** The command's first words, for messages: never its payload. */
function verb(command: string): string {
  return command.split("\n", 1)[0]!.replace(/ <<$/, "").slice(0, 120);
}
