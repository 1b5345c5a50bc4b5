// The zero-hop table pushed into Caddy through its admin API: one PATCH of the server's routes,
// which Caddy applies as a whole new configuration (it reloads every change that way), so
// requests see the old routes or the new ones. A Caddy started from its configuration file
// holds the not-synced routes, which have no revision.

import { err, ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import { adminCall, adminRefused } from "./admin-http.ts";
import { caddyRoutes, parseCaddyRevision, REVISION_ID, ROUTES_PATH } from "./caddy-routes.ts";
import { tableOf } from "./table.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface CaddyTargetOptions {
  readonly name?: string;
  /** The admin endpoint, as caddy.json's `admin.listen`: `http://127.0.0.1:2019`. */
  readonly admin: string;
  /** For one push: Caddy reloads its whole configuration, about 0.15 s for 10k Apps. */
  readonly pushTimeoutMs?: number;
  readonly checkTimeoutMs?: number;
  /** Most table keys in one lookup group (caddy-key-routes.ts): default about 3 √keys. */
  readonly groupSize?: number;
}

/** A PushTarget for Caddy 2.6+ over its admin API, with the zero-hop caddy.json. */
export function caddyTarget(options: CaddyTargetOptions): PushTarget {
  const admin = options.admin.replace(/\/$/, "");
  const pushTimeoutMs = options.pushTimeoutMs ?? 30_000;
  const checkTimeoutMs = options.checkTimeoutMs ?? 2_000;
  const routesOptions = options.groupSize === undefined ? {} : { groupSize: options.groupSize };
  return {
    name: options.name ?? "caddy",
    async push(view: RouteView): Promise<Result<void, PushFailure>> {
      const body = JSON.stringify(caddyRoutes(tableOf(view), routesOptions));
      const answer = await adminCall(`${admin}${ROUTES_PATH}`, pushTimeoutMs, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body,
      });
      if (!answer.ok) return answer;
      if (answer.value.status !== 200) return adminRefused("PATCH", answer.value);
      return ok(undefined);
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const answer = await adminCall(`${admin}/id/${REVISION_ID}`, checkTimeoutMs, {
        method: "GET",
      });
      if (!answer.ok) return answer;
      // The configuration file's not-synced routes have no revision handler: nothing pushed.
      if (answer.value.status === 404) return ok(null);
      if (answer.value.status !== 200) return adminRefused("GET", answer.value);
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.value.text);
      } catch {
        return err({ reason: "protocol", message: "GET revision: the answer is not JSON" });
      }
      const revision = parseCaddyRevision(parsed);
      if (revision === undefined) {
        return err({ reason: "protocol", message: "GET revision: no revision in the answer" });
      }
      return ok(revision);
    },
  };
}
