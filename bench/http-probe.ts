import { connect, type Socket } from "node:net";

/** One answer: the status and the headers the bench reads. */
export interface ProbeAnswer {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
}

/**
 * A minimal HTTP/1.1 client on one kept-alive loopback connection, one request at a time: polling
 * through `node:http` costs several times more per request, and the propagation figures are bounded
 * by how often the bench can ask. Answers must carry content-length (every answer of the sidecar
 * and of Fastify does); a body is read and dropped.
 */
export class HttpProbe {
  readonly #port: number;
  #socket: Socket | null = null;
  #buffer = "";
  #waiting: ((answer: ProbeAnswer | Error) => void) | null = null;

  constructor(port: number) {
    this.#port = port;
  }

  /** Sends one request; rejects when the connection fails (the caller may retry: a new one is opened). */
  request(path: string, host = "localhost"): Promise<ProbeAnswer> {
    const socket = this.#socket ?? this.#open();
    return new Promise((resolve, reject) => {
      this.#waiting = (a) => (a instanceof Error ? reject(a) : resolve(a));
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  #open(): Socket {
    const socket = connect({ port: this.#port, host: "127.0.0.1", noDelay: true });
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      this.#buffer += chunk;
      this.#parse();
    });
    const fail = (e: Error) => {
      if (this.#socket === socket) this.#socket = null;
      this.#buffer = "";
      const w = this.#waiting;
      this.#waiting = null;
      w?.(e);
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("connection closed")));
    this.#socket = socket;
    return socket;
  }

  #parse(): void {
    const end = this.#buffer.indexOf("\r\n\r\n");
    if (end === -1) return;
    const lines = this.#buffer.slice(0, end).split("\r\n");
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get("content-length") ?? 0);
    if (this.#buffer.length < end + 4 + length) return;
    this.#buffer = this.#buffer.slice(end + 4 + length);
    const status = Number(lines[0]!.split(" ")[1]);
    const w = this.#waiting;
    this.#waiting = null;
    w?.({ status, headers });
  }
}

/**
 * Polls `path` (with `host` as its Host header) until it answers `status` or `timeoutMs` passes;
 * resolves with the time it took.
 */
export async function waitForStatus(
  port: number,
  path: string,
  status: number,
  timeoutMs: number,
  intervalMs = 2,
  host = "localhost",
): Promise<number> {
  const t0 = performance.now();
  const probe = new HttpProbe(port);
  try {
    for (;;) {
      const answer = await probe.request(path, host).catch(() => null);
      if (answer?.status === status) return performance.now() - t0;
      if (performance.now() - t0 > timeoutMs)
        throw new Error(`${path}: no ${status} in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  } finally {
    probe.close();
  }
}

/** One unlabelled sample from the sidecar's `/metrics`. */
export async function metric(opsPort: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}
