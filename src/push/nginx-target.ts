// The zero-hop table pushed into nginx: one PUT of the whole table to the push listener that
// nginx.conf serves from Lua, which fills a new generation of its shared dict and switches to it
// at once. A restarted nginx has an empty dict and answers 404 for the revision: not synced.

import { ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import { adminCall, adminRefused } from "./admin-http.ts";
import { nginxTableBody } from "./nginx-table.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface NginxTargetOptions {
  readonly name?: string;
  /** The push listener of nginx.conf: `http://127.0.0.1:8001`. */
  readonly endpoint: string;
  readonly timeoutMs?: number;
}

/** A PushTarget for nginx with libnginx-mod-http-lua and the zero-hop nginx.conf. */
export function nginxTarget(options: NginxTargetOptions): PushTarget {
  const endpoint = options.endpoint.replace(/\/$/, "");
  const timeoutMs = options.timeoutMs ?? 5_000;
  return {
    name: options.name ?? "nginx",
    async push(view: RouteView): Promise<Result<void, PushFailure>> {
      const answer = await adminCall(`${endpoint}/replica-mirror/table`, timeoutMs, {
        method: "PUT",
        headers: { "content-type": "text/plain" },
        body: nginxTableBody(view),
      });
      if (!answer.ok) return answer;
      if (answer.value.status !== 204) return adminRefused("PUT", answer.value);
      return ok(undefined);
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const answer = await adminCall(`${endpoint}/replica-mirror/revision`, timeoutMs, {
        method: "GET",
      });
      if (!answer.ok) return answer;
      if (answer.value.status === 404) return ok(null);
      if (answer.value.status !== 200 || !/^\d+$/.test(answer.value.text)) {
        return adminRefused("GET", answer.value);
      }
      return ok(Number(answer.value.text));
    },
  };
}
