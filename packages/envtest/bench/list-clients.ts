/**
 * The list benchmark's clients, in a worker thread so they do not share the server's event loop:
 * `clients` concurrent GETs of one URL, each only counting the bytes it receives.
 */
import { Agent, request } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

/** What the worker is asked to do. */
export interface ListJob {
  readonly url: string;
  readonly clients: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** What it answers: each client's time to the last byte, its bytes, and its status. */
export interface ListTiming {
  readonly ms: number;
  readonly bytes: number;
  readonly status: number;
}

function list(agent: Agent, job: ListJob): Promise<ListTiming> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(job.url, { agent, headers: job.headers }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => {
        bytes += c.length;
      });
      res.on("end", () =>
        resolve({ ms: performance.now() - started, bytes, status: res.statusCode ?? 0 }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

if (parentPort === null) throw new Error("list-clients.ts runs as a worker");
const port = parentPort;
const job = workerData as ListJob;
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
const timings = await Promise.all(Array.from({ length: job.clients }, () => list(agent, job)));
agent.destroy();
port.postMessage(timings);
