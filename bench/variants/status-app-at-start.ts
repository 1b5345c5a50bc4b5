// Diagnostic only: the artifact with the status API built at start, as before ADR 43 (the
// devices suite builds it with this module in place of src/ops/status-app-loader.ts).

import { createStatusApp, type StatusAppOptions } from "../../src/ops/status-app.ts";
import type { StatusAppLoader } from "../../src/ops/status-app-loader.ts";

/** Builds the app at once; every request waits for the same one. */
export function statusAppOnFirstUse(options: StatusAppOptions): StatusAppLoader {
  const app = createStatusApp(options);
  const ready = new Promise<typeof app>((resolve, reject) => {
    app.ready((e) => (e ? reject(e) : resolve(app)));
  });
  return {
    app: () => ready,
    async close() {
      await app.close();
    },
  };
}
