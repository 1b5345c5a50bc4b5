// `replica-mirror serve` as src/cli/main.ts runs it, with the data thread's test hooks
// (hooked-data-worker.ts) driven over IPC: `{ freezeMs }` blocks its event loop that long,
// `{ listenerError: [code, syscall] }` makes its listening socket fail.

import { main } from "../../src/cli/run.ts";
import { hookedDataWorker } from "./hooked-data-worker.ts";

const hooked = hookedDataWorker();
process.on("message", (m: { freezeMs?: number; listenerError?: [string, string] }) => {
  if (m.freezeMs !== undefined) hooked.freeze(m.freezeMs);
  if (m.listenerError !== undefined) hooked.failListener(...m.listenerError);
});
// The channel must not keep a stopped sidecar alive.
process.channel?.unref();
process.exitCode = await main(process.argv.slice(2), { dataWorker: hooked.worker });
