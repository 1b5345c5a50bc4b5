/**
 * The load check's clients, run in a worker thread so they do not share the server's event loop (as
 * real clients would not): N counting watches and an HTTP writer. Driven by messages from
 * load.test.ts.
 */
import { Agent, request } from "node:http";
import { parentPort } from "node:worker_threads";

export type Command =
  | { readonly type: "watch"; readonly url: string; readonly watchers: number }
  | { readonly type: "await"; readonly count: number }
  | {
      readonly type: "put";
      readonly url: string;
      readonly writes: number;
      readonly concurrency: number;
      readonly names: number;
    }
  | { readonly type: "close" };

export type Reply =
  | { readonly type: "ready" }
  | { readonly type: "reached" }
  | { readonly type: "put-done"; readonly ms: number; readonly statuses: Record<string, number> };

if (parentPort === null) throw new Error("load-client.ts runs as a worker");
const port = parentPort;

function reply(r: Reply): void {
  port.postMessage(r);
}

const watchAgent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const writeAgent = new Agent({ keepAlive: true, maxSockets: 64 });
const counts: number[] = [];
const requests: ReturnType<typeof request>[] = [];
let waiting: { count: number } | undefined;

function checkReached() {
  if (waiting !== undefined && counts.every((c) => c >= (waiting?.count ?? 0))) {
    waiting = undefined;
    reply({ type: "reached" });
  }
}

function openWatch(url: string, i: number) {
  return new Promise<void>((resolve, reject) => {
    counts[i] = 0;
    const req = request(url, { agent: watchAgent }, (res) => {
      res.on("data", (c: Buffer) => {
        let n = 0;
        for (let j = c.indexOf(10); j >= 0; j = c.indexOf(10, j + 1)) n++;
        counts[i] = (counts[i] ?? 0) + n;
        if (waiting !== undefined) checkReached();
      });
      res.on("error", () => {});
      resolve();
    });
    req.on("error", reject);
    req.end();
    requests.push(req);
  });
}

function put(url: string, name: string, value: string) {
  return new Promise<number>((resolve, reject) => {
    const body = JSON.stringify({ metadata: { name }, stringData: { value } });
    const req = request(
      `${url}/${name}`,
      {
        method: "PUT",
        agent: writeAgent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

port.on("message", async (cmd: Command) => {
  switch (cmd.type) {
    case "watch":
      await Promise.all(Array.from({ length: cmd.watchers }, (_, i) => openWatch(cmd.url, i)));
      return reply({ type: "ready" });
    case "await":
      waiting = { count: cmd.count };
      return checkReached();
    case "put": {
      const statuses: Record<string, number> = {};
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: cmd.concurrency }, async () => {
          while (next < cmd.writes) {
            const i = next++;
            const code = await put(cmd.url, `h${i % cmd.names}`, String(i));
            statuses[code] = (statuses[code] ?? 0) + 1;
          }
        }),
      );
      return reply({ type: "put-done", ms: performance.now() - started, statuses });
    }
    case "close":
      for (const r of requests) r.destroy();
      watchAgent.destroy();
      writeAgent.destroy();
      port.close();
      return;
  }
});
