// The zero-hop table pushed into Caddy through its admin API on a Unix socket: one PATCH of the
// server's routes, which Caddy applies as a whole new configuration (it reloads every change that
// way), so requests see the old routes or the new ones. A Caddy started from its configuration
// file holds the not-synced routes, which have no revision. A verification reads the routes back
// (GET) and compares them, key order aside, with the routes pushed.

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { PushView, RouteView } from "../snapshot/types.ts";
import { type AdminAnswer, adminCall, adminRefused } from "./admin-http.ts";
import {
  caddyRoutes,
  holdsRevision,
  parseCaddyRevision,
  REVISION_ID,
  ROUTES_PATH,
} from "./caddy-routes.ts";
import { tableOf } from "./table.ts";
import { canonicalJson, sha256 } from "./table-digest.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface CaddyTargetOptions {
  readonly name?: string;
  /** The admin API's Unix socket, as caddy.json's `admin.listen` (`unix//<path>`) names it. */
  readonly socket: string;
  /** For one push: Caddy reloads its whole configuration, about 0.15 s for 10k Apps. */
  readonly pushTimeoutMs?: number;
  readonly checkTimeoutMs?: number;
  /** Most table keys in one lookup group (caddy-key-routes.ts): default about 3 √keys. */
  readonly groupSize?: number;
}

/** A PushTarget for Caddy 2.6+ over its admin API, with the zero-hop caddy.json. */
export function caddyTarget(options: CaddyTargetOptions): PushTarget {
  const { socket } = options;
  const pushTimeoutMs = options.pushTimeoutMs ?? 30_000;
  const checkTimeoutMs = options.checkTimeoutMs ?? 2_000;
  const routesOptions = options.groupSize === undefined ? {} : { groupSize: options.groupSize };
  const routesOf = (view: RouteView) => caddyRoutes(tableOf(view), routesOptions);
  // Caddy 2.6's admin API on a Unix socket admits only an empty Host.
  const call = (method: string, path: string, timeoutMs: number, body?: string) =>
    adminCall(socket, timeoutMs, {
      method,
      path,
      host: "",
      ...(body === undefined ? {} : { contentType: "application/json", body }),
    });
  /** The JSON of Caddy's answer, or a protocol failure naming `what`. */
  const json = (what: string, answer: AdminAnswer): Result<unknown, PushFailure> => {
    try {
      return ok(JSON.parse(answer.text));
    } catch {
      return err({ reason: "protocol", message: `${what}: the answer is not JSON` });
    }
  };
  return {
    name: options.name ?? "caddy",
    async push(view: PushView): Promise<Result<void, PushFailure>> {
      const body = JSON.stringify(routesOf(view));
      const answer = await call("PATCH", ROUTES_PATH, pushTimeoutMs, body);
      if (!answer.ok) return answer;
      if (answer.value.status !== 200) return adminRefused("PATCH", answer.value);
      return ok(undefined);
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const answer = await call("GET", `/id/${REVISION_ID}`, checkTimeoutMs);
      if (!answer.ok) return answer;
      // The configuration file's not-synced routes have no revision handler: nothing pushed.
      if (answer.value.status === 404) return ok(null);
      if (answer.value.status !== 200) return adminRefused("GET revision", answer.value);
      const parsed = json("GET revision", answer.value);
      if (!parsed.ok) return parsed;
      const revision = parseCaddyRevision(parsed.value);
      if (revision === undefined) {
        return err({ reason: "protocol", message: "GET revision: no revision in the answer" });
      }
      return ok(revision);
    },
    async heldDigest(): Promise<Result<string | null, PushFailure>> {
      // The routes as Caddy holds them (0.9 MB at 10k Apps), its objects' keys in its own order.
      const answer = await call("GET", ROUTES_PATH, pushTimeoutMs);
      if (!answer.ok) return answer;
      if (answer.value.status !== 200) return adminRefused("GET routes", answer.value);
      const parsed = json("GET routes", answer.value);
      if (!parsed.ok) return parsed;
      // The configuration file's not-synced routes: nothing pushed.
      if (!holdsRevision(parsed.value)) return ok(null);
      return ok(sha256(canonicalJson(parsed.value)));
    },
    digestOf: cachedPer((view: PushView) => sha256(canonicalJson(routesOf(view)))),
  };
}
