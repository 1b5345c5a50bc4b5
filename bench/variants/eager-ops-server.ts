// Diagnostic only, not what ships: the ops listener with the status API's module (Fastify and its
// dependencies) loaded with the rest at start, as before ADR 28. The devices suite builds the
// artifact with this module in place of src/ops/ops-server.ts.

import "../../src/ops/status-app.ts";

export * from "../../src/ops/ops-server.ts";
