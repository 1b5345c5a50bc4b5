/**
 * The HTTP control path under /__envtest/: the Faults API and the request log for tests that drive
 * the server from another process. Bodies are JSON; every answer is JSON.
 *
 *   POST   /__envtest/faults/drop-watches            → {"watches": n}
 *   POST   /__envtest/faults/end-watches             → {"watches": n}
 *   POST   /__envtest/faults/stall     {"on": bool}  (no body: on)
 *   POST   /__envtest/faults/unstall
 *   POST   /__envtest/faults/compact
 *   POST   /__envtest/faults/fail      {"verb","count","status","retryAfterSeconds"?}
 *   POST   /__envtest/faults/latency   {"ms"}
 *   POST   /__envtest/faults/chunking  {"mode","seed"?}
 *   POST   /__envtest/faults/garbage   {"kind"}      → {"watches": n}
 *   POST   /__envtest/faults/reset
 *   GET    /__envtest/requests                       → {"items": [...]}
 *   DELETE /__envtest/requests
 *   GET    /__envtest/state                          → {"resourceVersion", "secrets", "watches"}
 */
import { z } from "zod";
import type { Ctx } from "./context.ts";
import type { Faults } from "./faults.ts";
import { readBody, sendJson } from "./http-io.ts";
import type { RequestLog } from "./request-log.ts";

const failBody = z.object({
  verb: z.enum(["get", "list", "watch", "create", "update", "patch", "delete", "any"]),
  count: z.number().int().min(1).default(1),
  status: z.number().int().min(400).max(599),
  retryAfterSeconds: z.number().int().min(0).optional(),
});
const stallBody = z.object({ on: z.boolean().default(true) });
const latencyBody = z.object({ ms: z.number().min(0) });
const chunkingBody = z.object({
  mode: z.enum(["normal", "split", "coalesce"]),
  seed: z.number().int().optional(),
});
const garbageBody = z.object({ kind: z.enum(["bytes", "truncated", "non-json"]) });

function badInput(ctx: Ctx, message: string) {
  return sendJson(ctx.res, 400, { error: message });
}

/** Handles one control request. */
export async function handleControl(
  ctx: Ctx,
  action: string,
  faults: Faults,
  log: RequestLog,
): Promise<void> {
  const method = ctx.req.method ?? "GET";
  const body = await readBody(ctx.req);
  let json: unknown = {};
  if (body.ok && body.value.length > 0) {
    try {
      json = JSON.parse(body.value.toString("utf8"));
    } catch {
      return badInput(ctx, "body must be JSON");
    }
  }
  const parse = <T>(schema: z.ZodType<T>): T | undefined => {
    const r = schema.safeParse(json);
    if (!r.success) {
      badInput(ctx, r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      return undefined;
    }
    return r.data;
  };
  const done = (extra: object = {}) => sendJson(ctx.res, 200, { ok: true, ...extra });

  if (action === "requests") {
    if (method === "DELETE") {
      log.clear();
      return done();
    }
    return sendJson(ctx.res, 200, { items: log.entries() });
  }
  if (action === "state") {
    return sendJson(ctx.res, 200, {
      resourceVersion: String(ctx.state.resourceVersion),
      secrets: ctx.state.size,
      watches: ctx.hub.size,
    });
  }
  if (method !== "POST") return sendJson(ctx.res, 405, { error: "use POST" });
  switch (action) {
    case "faults/drop-watches":
      return done({ watches: faults.dropWatches() });
    case "faults/end-watches":
      return done({ watches: faults.endWatches() });
    case "faults/stall": {
      const b = parse(stallBody);
      if (b === undefined) return;
      faults.stall(b.on);
      return done();
    }
    case "faults/unstall":
      faults.stall(false);
      return done();
    case "faults/compact":
      faults.compact();
      return done({ resourceVersion: String(ctx.state.resourceVersion) });
    case "faults/fail": {
      const b = parse(failBody);
      if (b === undefined) return;
      faults.failNext(b);
      return done();
    }
    case "faults/latency": {
      const b = parse(latencyBody);
      if (b === undefined) return;
      faults.setLatency(b.ms);
      return done();
    }
    case "faults/chunking": {
      const b = parse(chunkingBody);
      if (b === undefined) return;
      faults.chunking(b);
      return done();
    }
    case "faults/garbage": {
      const b = parse(garbageBody);
      if (b === undefined) return;
      return done({ watches: faults.injectGarbage(b.kind) });
    }
    case "faults/reset":
      faults.reset();
      return done();
    default:
      return sendJson(ctx.res, 404, { error: `unknown control action: ${action}` });
  }
}
