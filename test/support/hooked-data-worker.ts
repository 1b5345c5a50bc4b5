// The data thread's real worker (src/route/worker.ts), started with two hooks a test drives by
// message, for failures no test can cause on demand otherwise:
// - `{ type: "test-freeze", ms }` blocks the worker's event loop that long (a wait on an Atomics
//   cell nobody notifies), as a thread stuck in a long computation would be;
// - `{ type: "test-listener-error", code, syscall }` makes the data listener's server emit the
//   error Node emits when its listening socket fails (`accept EMFILE`, say). A real EMFILE seldom
//   gets there: libuv keeps a spare file to accept and close connections past the limit, and
//   reports the error only when it could not take that file back.
// The data thread ignores both messages. The hooks listen only after the worker's own module has
// run, so that its first message (the settings) reaches the worker itself.

import { Worker } from "node:worker_threads";

const ENTRY = new URL("../../src/route/worker.ts", import.meta.url).href;
const BOOT = `
const { parentPort } = require("node:worker_threads");
const http = require("node:http");
const servers = [];
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  servers.push(this);
  return listen.apply(this, args);
};
import(${JSON.stringify(ENTRY)}).then(() => {
  parentPort.on("message", (m) => {
    if (m === null || typeof m !== "object") return;
    if (m.type === "test-freeze") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, m.ms);
    if (m.type === "test-listener-error") {
      const e = new Error(m.syscall + " " + m.code);
      Object.assign(e, { code: m.code, errno: -24, syscall: m.syscall });
      for (const s of servers) s.emit("error", e);
    }
  });
});
`;

/** A data worker as `spawnDataWorker` makes it (unreferenced until started), with its hooks. */
export function hookedDataWorker(): {
  worker: Worker;
  freeze(ms: number): void;
  failListener(code: string, syscall: string): void;
} {
  const worker = new Worker(BOOT, { eval: true });
  worker.unref();
  return {
    worker,
    freeze: (ms) => worker.postMessage({ type: "test-freeze", ms }),
    failListener: (code, syscall) =>
      worker.postMessage({ type: "test-listener-error", code, syscall }),
  };
}
