// The zero-hop table pushed into nginx: the whole table in one PUT to the push listener that
// nginx.conf serves from Lua, which fills a new generation of its shared dict and switches to it
// at once; after that, while the Registry's hostnames stay the same, one PATCH of the Apps changed
// since, which nginx fills as an overlay generation read before the whole one and switches to
// the same way. A restarted nginx has an empty dict: it answers 404 for the revision (not synced)
// and 409 to a PATCH, and gets the whole table again.

import { ok, type Result } from "../result.ts";
import type { RouteView } from "../snapshot/types.ts";
import { type AdminAnswer, adminCall, adminRefused } from "./admin-http.ts";
import { type NginxBase, nginxChangesBody, nginxLines, nginxTableBody } from "./nginx-table.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface NginxTargetOptions {
  readonly name?: string;
  /** The push listener of nginx.conf: `http://127.0.0.1:8001`. */
  readonly endpoint: string;
  readonly timeoutMs?: number;
  /**
   * Most lines a PATCH carries; more changed since the last whole table and the whole table goes
   * again. Default 2,000: about 140 kB, a fifth of the whole table of 10k Apps.
   */
  readonly maxChangedLines?: number;
}

/** A PushTarget for nginx with libnginx-mod-http-lua and the zero-hop nginx.conf. */
export function nginxTarget(options: NginxTargetOptions): PushTarget {
  const endpoint = options.endpoint.replace(/\/$/, "");
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxLines = options.maxChangedLines ?? 2_000;
  const table = `${endpoint}/replica-mirror/table`;
  const send = (method: "PUT" | "PATCH", body: string) =>
    adminCall(table, timeoutMs, { method, headers: { "content-type": "text/plain" }, body });
  // The whole table nginx was last seen to take; null until then and after a refused PATCH.
  let base: NginxBase | null = null;

  async function whole(view: RouteView): Promise<Result<void, PushFailure>> {
    base = null;
    const answer = await send("PUT", nginxTableBody(view));
    if (!answer.ok) return answer;
    if (answer.value.status !== 200 || !/^\d+$/.test(answer.value.text)) {
      return adminRefused("PUT", answer.value);
    }
    base = { routes: view.routes, lines: nginxLines(view), generation: answer.value.text };
    return ok(undefined);
  }

  return {
    name: options.name ?? "nginx",
    async push(view: RouteView): Promise<Result<void, PushFailure>> {
      const changes = base === null ? null : nginxChangesBody(view, base, maxLines);
      if (changes === null) return whole(view);
      const answer: Result<AdminAnswer, PushFailure> = await send("PATCH", changes);
      if (!answer.ok) return answer;
      if (answer.value.status === 204) return ok(undefined);
      // nginx restarted, or holds a table it was given by someone else: the whole table.
      if (answer.value.status === 409) return whole(view);
      return adminRefused("PATCH", answer.value);
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
