/**
 * The HTTP control path under /__envtest/: the Faults API, restarts and the request log, for tests
 * and benchmarks that drive the server from another process. Bodies are JSON; every answer is JSON.
 *
 *   POST   /__envtest/faults/drop-watches            → {"watches": n}
 *   POST   /__envtest/faults/end-watches             → {"watches": n}
 *   POST   /__envtest/faults/stall     {"on": bool}  (no body: on)
 *   POST   /__envtest/faults/unstall
 *   POST   /__envtest/faults/compact
 *   POST   /__envtest/faults/fail      {"verb","count","status","retryAfterSeconds"?}
 *   POST   /__envtest/faults/throttle  {"verbs","share","retryAfterSeconds"?,"forMs"?,"seed"?}
 *   POST   /__envtest/faults/latency   {"ms"}
 *   POST   /__envtest/faults/chunking  {"mode","seed"?}
 *   POST   /__envtest/faults/garbage   {"kind"}      → {"watches": n}
 *   POST   /__envtest/faults/reset
 *   POST   /__envtest/restart          {"downMs"?,"down"?}  (answers, then restarts)
 *   GET    /__envtest/feature-gates                  → {"WatchList": bool}
 *   POST   /__envtest/feature-gates    {"WatchList"?} → the gates now
 *   GET    /__envtest/requests                       → {"items": [...]}
 *   GET    /__envtest/requests/summary               → RequestSummary
 *   DELETE /__envtest/requests
 *   GET    /__envtest/state                          → {"resourceVersion", "secrets", "watches"}
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { Faults } from "./faults.ts";
import type { FeatureGateSettings } from "./feature-gates.ts";
import { readBody, sendJson } from "./http-io.ts";
import type { RequestLog } from "./request-log.ts";
import type { RestartOptions } from "./restart.ts";
import type { EnvtestState } from "./store.ts";
import type { WatchHub } from "./watch-hub.ts";

/** What the control path drives. */
export interface ControlTargets {
  readonly faults: Faults;
  readonly log: RequestLog;
  readonly state: EnvtestState;
  readonly hub: WatchHub;
  readonly featureGates: FeatureGateSettings;
  restart(options: RestartOptions): Promise<void>;
}

const faultVerb = z.enum(["get", "list", "watch", "create", "update", "patch", "delete", "any"]);
const failBody = z.object({
  verb: faultVerb,
  count: z.number().int().min(1).default(1),
  status: z.number().int().min(400).max(599),
  retryAfterSeconds: z.number().int().min(0).optional(),
});
const throttleBody = z.object({
  verbs: z.array(faultVerb),
  share: z.number().min(0).max(1),
  retryAfterSeconds: z.number().int().min(0).optional(),
  forMs: z.number().min(0).optional(),
  seed: z.number().int().optional(),
});
const restartBody = z.object({
  downMs: z.number().min(0).optional(),
  down: z.enum(["refuse", "unavailable"]).optional(),
});
const stallBody = z.object({ on: z.boolean().default(true) });
const latencyBody = z.object({ ms: z.number().min(0) });
const chunkingBody = z.object({
  mode: z.enum(["normal", "split", "coalesce"]),
  seed: z.number().int().optional(),
});
const garbageBody = z.object({ kind: z.enum(["bytes", "truncated", "non-json"]) });
const featureGatesBody = z.strictObject({ WatchList: z.boolean().optional() });

/** Handles one control request. */
export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  action: string,
  t: ControlTargets,
): Promise<void> {
  const method = req.method ?? "GET";
  const body = await readBody(req);
  let json: unknown = {};
  if (body.ok && body.value.length > 0) {
    try {
      json = JSON.parse(body.value.toString("utf8"));
    } catch {
      return sendJson(res, 400, { error: "body must be JSON" });
    }
  }
  const parse = <T>(schema: z.ZodType<T>): T | undefined => {
    const r = schema.safeParse(json);
    if (!r.success) {
      const why = r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      sendJson(res, 400, { error: why });
      return undefined;
    }
    return r.data;
  };
  const done = (extra: object = {}) => sendJson(res, 200, { ok: true, ...extra });

  if (action === "requests") {
    if (method === "DELETE") {
      t.log.clear();
      return done();
    }
    return sendJson(res, 200, { items: t.log.entries() });
  }
  if (action === "requests/summary") return sendJson(res, 200, t.log.summary());
  if (action === "state") {
    return sendJson(res, 200, {
      resourceVersion: String(t.state.resourceVersion),
      secrets: t.state.size,
      watches: t.hub.size,
    });
  }
  if (action === "feature-gates" && method !== "POST")
    return sendJson(res, 200, t.featureGates.current);
  if (method !== "POST") return sendJson(res, 405, { error: "use POST" });
  const faults = t.faults;
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
      return done({ resourceVersion: String(t.state.resourceVersion) });
    case "faults/fail": {
      const b = parse(failBody);
      if (b === undefined) return;
      faults.failNext(b);
      return done();
    }
    case "faults/throttle": {
      const b = parse(throttleBody);
      if (b === undefined) return;
      faults.throttle(b);
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
    case "feature-gates": {
      const b = parse(featureGatesBody);
      if (b === undefined) return;
      const gates = t.featureGates.set(b.WatchList === undefined ? {} : { WatchList: b.WatchList });
      return sendJson(res, 200, gates);
    }
    case "restart": {
      const b = parse(restartBody);
      if (b === undefined) return;
      // Answer first: a restart that refuses connections also destroys this one.
      res.once("finish", () => void t.restart(b));
      return done();
    }
    default:
      return sendJson(res, 404, { error: `unknown control action: ${action}` });
  }
}
