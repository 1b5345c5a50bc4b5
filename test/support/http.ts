// Plain GETs against a sidecar's listeners. Each is on its own connection unless the caller
// passes an agent (agent: false), so a test that counts sockets and timers sees none left behind
// by its own probes; a caller sampling thousands of answers passes a keep-alive agent.

import http from "node:http";
import { waitUntil } from "./wait.ts";

export interface Got {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** How a GET travels: its connection pool (none by default) and how long it may take. */
interface GetOptions {
  /** Default GET; another method is sent the same way, without a body. */
  readonly method?: string;
  readonly agent?: http.Agent;
  /** Default 5,000. */
  readonly timeoutMs?: number;
}

/**
 * GET (or `options.method`) http://127.0.0.1:port/path with optional headers; rejects on a network
 * error or timeout.
 */
export function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  options: GetOptions = {},
): Promise<Got> {
  const timeout = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        headers,
        method: options.method ?? "GET",
        agent: options.agent ?? false,
        timeout,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () =>
      req.destroy(new Error(`${req.method} ${path}: no answer within ${timeout / 1000} s`)),
    );
    req.on("error", reject);
    req.end();
  });
}

/** Resolves once the ops listener on `opsPort` answers /readyz with 200 (default 15 s at most). */
export async function untilReady(
  opsPort: number,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  await waitUntil(async () => (await get(opsPort, "/readyz")).status === 200, {
    timeoutMs: 15_000,
    ...options,
    what: "/readyz 200",
  });
}

/** GET and parse a JSON body. */
export async function getJson<T = unknown>(port: number, path: string): Promise<T> {
  const r = await get(port, path);
  return JSON.parse(r.body) as T;
}

/** One sample of a Prometheus metric without labels (or with exactly these labels); undefined when absent. */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(",");
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = (m[2] ?? "")
      .split(",")
      .filter((s) => s !== "")
      .sort()
      .join(",");
    if (have === want) return Number(m[3]);
  }
  return undefined;
}
