/** The record of every request the server received, so tests can assert what a client did. */
import type { Verb } from "./routes.ts";

/** One request as received; `verb` classifies it as the API server's RequestInfo would. */
export interface RequestLogEntry {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly verb: Verb;
  readonly resource?: "secrets" | "namespaces";
  readonly namespace?: string;
  readonly name?: string;
  /** The response code, once the response head has been written. */
  readonly status?: number;
  /** Milliseconds since the epoch when the request arrived. */
  readonly time: number;
  readonly userAgent?: string;
  readonly contentType?: string;
}

/** What tests read: entries in arrival order, clearable between phases. */
export interface RequestLog {
  /** A snapshot of the entries in arrival order. */
  entries(): readonly RequestLogEntry[];
  clear(): void;
}

interface Pending {
  readonly entry: Omit<RequestLogEntry, "status">;
  readonly status: () => number | undefined;
}

/**
 * The server's log. Control-path requests are not recorded: they are the test talking, not the
 * client.
 */
export class RequestRecorder implements RequestLog {
  readonly #entries: Pending[] = [];
  readonly #limit: number;

  constructor(limit = 100_000) {
    this.#limit = limit;
  }

  /** Records a request; `status` is read whenever entries are listed. */
  record(entry: Omit<RequestLogEntry, "status">, status: () => number | undefined): void {
    if (this.#entries.length >= this.#limit) this.#entries.shift();
    this.#entries.push({ entry, status });
  }

  entries(): readonly RequestLogEntry[] {
    return this.#entries.map(({ entry, status }) => {
      const s = status();
      return s === undefined ? { ...entry } : { ...entry, status: s };
    });
  }

  clear(): void {
    this.#entries.length = 0;
  }
}
