import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

/** A pino logger writing JSON lines into memory, as they would reach stdout. */
export function memoryLogger(level: string): { logger: Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level }, sink);
  return {
    logger,
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter((l) => l !== ""),
  };
}
