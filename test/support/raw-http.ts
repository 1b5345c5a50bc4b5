// A raw HTTP/1.x client over node:net: it sends exactly the bytes it is given and parses what
// comes back without normalising anything, so a test sees what a data plane would see.

import net from "node:net";

/** One final answer, after any 1xx interim answers. Header names are lower-cased, in order. */
export interface RawResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** 1xx statuses received before the final answer (100 Continue). */
  readonly interim: readonly number[];
}

/** How one exchange ended. */
export type Exchange =
  | { readonly kind: "answer"; readonly response: RawResponse; readonly closed: boolean }
  | { readonly kind: "closed"; readonly received: Buffer }
  | { readonly kind: "timeout"; readonly received: Buffer };

/** The value of a header (the first one when repeated), or undefined. */
export function header(response: RawResponse, name: string): string | undefined {
  return response.headers.find(([n]) => n === name)?.[1];
}

/** How many times a header appears. */
export function headerCount(response: RawResponse, name: string): number {
  return response.headers.filter(([n]) => n === name).length;
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** Parses one answer from the front of `buf`: undefined until it is complete. */
function parseAnswer(
  buf: Buffer,
  head: boolean,
  ended: boolean,
): { response: RawResponse; rest: Buffer } | undefined {
  const interim: number[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf(CRLF2, at);
    if (end === -1) return undefined;
    const lines = buf.subarray(at, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(lines[0] ?? "")?.[1] ?? Number.NaN);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${lines[0]}`);
    const headers = lines.slice(1).map((l): [string, string] => {
      const colon = l.indexOf(":");
      return [l.slice(0, colon).trim().toLowerCase(), l.slice(colon + 1).trim()];
    });
    at = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      interim.push(status);
      continue;
    }
    const get = (n: string) => headers.find(([h]) => h === n)?.[1];
    const done = (bodyEnd: number, body: Buffer) => ({
      response: { status, headers, body, interim },
      rest: buf.subarray(bodyEnd),
    });
    if (head || status === 204 || status === 304) return done(at, Buffer.alloc(0));
    if (/chunked/i.test(get("transfer-encoding") ?? "")) {
      const parts: Buffer[] = [];
      let p = at;
      for (;;) {
        const lineEnd = buf.indexOf("\r\n", p);
        if (lineEnd === -1) return undefined;
        const size = Number.parseInt(buf.subarray(p, lineEnd).toString("latin1"), 16);
        if (!Number.isInteger(size)) throw new Error("bad chunk size in answer");
        if (size === 0) {
          const trailerEnd = buf.indexOf(CRLF2, lineEnd);
          if (trailerEnd === -1) {
            if (buf.length >= lineEnd + 4 && buf.subarray(lineEnd, lineEnd + 4).equals(CRLF2))
              return done(lineEnd + 4, Buffer.concat(parts));
            return undefined;
          }
          return done(trailerEnd + 4, Buffer.concat(parts));
        }
        if (buf.length < lineEnd + 2 + size + 2) return undefined;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        p = lineEnd + 2 + size + 2;
      }
    }
    const length = get("content-length");
    if (length !== undefined) {
      const n = Number(length);
      if (buf.length < at + n) return undefined;
      return done(at + n, buf.subarray(at, at + n));
    }
    // No framing: the body runs to the end of the connection.
    return ended ? done(buf.length, buf.subarray(at)) : undefined;
  }
}

/** One client connection. Exchanges run one at a time. */
export class RawConnection {
  readonly #socket: net.Socket;
  #buf: Buffer = Buffer.alloc(0);
  #ended = false;
  #wake: (() => void) | null = null;
  readonly connected: Promise<void>;
  /** Resolves when the socket has closed, either side having ended it. */
  readonly closed: Promise<void>;

  constructor(port: number, host = "127.0.0.1") {
    this.#socket = net.connect(port, host);
    this.#socket.setNoDelay(true);
    this.connected = new Promise((resolve, reject) => {
      this.#socket.once("connect", () => resolve());
      this.#socket.once("error", reject);
    });
    this.closed = new Promise((resolve) => this.#socket.once("close", () => resolve()));
    this.#socket.on("data", (d: Buffer) => {
      this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
      this.#wake?.();
    });
    const end = () => {
      this.#ended = true;
      this.#wake?.();
    };
    this.#socket.on("end", end);
    this.#socket.on("close", end);
    this.#socket.on("error", end);
  }

  /** True once the server closed (or the socket failed). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Sends `bytes` and reads one answer; `head` says the request was a HEAD (no body follows). */
  async exchange(bytes: Buffer, head: boolean, timeoutMs = 5_000): Promise<Exchange> {
    await this.connected;
    if (!this.#ended) this.#socket.write(bytes);
    return this.next(head, timeoutMs);
  }

  /** Sends `bytes` (part of a request, or several) once the socket took them. */
  async send(bytes: Buffer | string): Promise<void> {
    await this.connected;
    await new Promise<void>((resolve, reject) =>
      this.#socket.write(bytes, (e) => (e ? reject(e) : resolve())),
    );
  }

  /** Reads the next answer; `head` says its request was a HEAD (no body follows). */
  async next(head = false, timeoutMs = 5_000): Promise<Exchange> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseAnswer(this.#buf, head, this.#ended);
      if (parsed !== undefined) {
        this.#buf = parsed.rest;
        const close = /close/i.test(header(parsed.response, "connection") ?? "");
        if (close) await this.#waitEnd(Math.max(0, deadline - Date.now()));
        return { kind: "answer", response: parsed.response, closed: this.#ended };
      }
      if (this.#ended) return { kind: "closed", received: this.#buf };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: "timeout", received: this.#buf };
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  async #waitEnd(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.#ended && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, until - Date.now());
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  destroy(): void {
    this.#socket.destroy();
  }
}
