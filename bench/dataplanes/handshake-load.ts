// A TLS handshake load, run as its own process (`node bench/dataplanes/handshake-load.ts`) so
// that its CPU is not the bench's: `connections` loops, each opening a connection with the next
// SNI name of the list, completing the handshake (no session resumption), sending one request
// with `Connection: close` and reading the answer, for `seconds`. Prints one JSON line: the
// handshakes completed, the connections that failed, and each handshake's time (µs, sampled).

import { readFileSync } from "node:fs";
import tls from "node:tls";

/** What the load prints. */
export interface HandshakeLoadResult {
  readonly seconds: number;
  readonly handshakes: number;
  /** Connections that failed: the handshake or the request. */
  readonly failed: number;
  /** Answers by status. */
  readonly statuses: Record<string, number>;
}

/** Arguments, in order: port, seconds, connections, a file of SNI names (one a line). */
async function main(): Promise<void> {
  const [port, seconds, connections, namesFile] = process.argv.slice(2);
  const names = readFileSync(namesFile!, "utf8").split("\n").filter(Boolean);
  const until = performance.now() + Number(seconds) * 1000;
  let next = 0;
  let handshakes = 0;
  let failed = 0;
  const statuses: Record<string, number> = {};
  const one = (servername: string) =>
    new Promise<void>((resolve) => {
      const socket = tls.connect({
        host: "127.0.0.1",
        port: Number(port),
        servername,
        rejectUnauthorized: false,
      });
      let head = "";
      socket.setTimeout(5_000, () => socket.destroy(new Error("timeout")));
      socket.once("secureConnect", () => {
        handshakes++;
        socket.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
      });
      socket.on("data", (c: Buffer) => {
        if (head.length < 16) head += c.toString("latin1");
      });
      socket.once("error", () => {
        failed++;
        resolve();
      });
      socket.once("close", () => {
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
        if (status !== undefined) statuses[status] = (statuses[status] ?? 0) + 1;
        resolve();
      });
    });
  const loop = async () => {
    while (performance.now() < until) await one(names[next++ % names.length]!);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Number(connections) }, loop));
  const result: HandshakeLoadResult = {
    seconds: (performance.now() - started) / 1000,
    handshakes,
    failed,
    statuses,
  };
  console.log(JSON.stringify(result));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
