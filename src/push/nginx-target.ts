// The zero-hop table pushed into nginx: the whole table in one PUT to the push listener that
// nginx.conf serves from Lua on a Unix socket, which fills a new generation of its shared dict
// and switches to it at once; after that, while the Registry's hostnames stay the same, one PATCH
// of the Apps changed since, which nginx fills as an overlay generation read before the whole one
// and switches to the same way. A restarted nginx has an empty dict: it answers 404 for the
// revision (not synced) and 409 to a PATCH, and gets the whole table again. nginx hashes the
// table it holds itself (GET /replica-mirror/digest): an order-free digest of the whole table's
// lines (nginx-digest.ts, ADR 67), kept as each PUT and PATCH writes, or with `?deep=1` read from
// every key (ADR 70).
// The certificates it serves by SNI (ADR 56) are lines of the same table (nginx-certificates.ts),
// so a rotation is a PATCH of the App's `k` line, and the digest covers them. A body holds
// Secret bytes (credentials, private keys): no failure returned here quotes one.

import { cachedPer } from "../cached-per.ts";
import { ok, type Result } from "../result.ts";
import type { PushView } from "../snapshot/types.ts";
import { type AdminAnswer, adminCall, adminRefused } from "./admin-http.ts";
import { type NginxChanges, nginxChanges } from "./nginx-changes.ts";
import { NGINX_DIGEST, nginxTableDigest, nginxTableDigestSliced } from "./nginx-digest.ts";
import { nginxBase, nginxTableBody } from "./nginx-table.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface NginxTargetOptions {
  readonly name?: string;
  /** The push listener of nginx.conf: the path of its Unix socket. */
  readonly socket: string;
  readonly timeoutMs?: number;
  /**
   * Most lines a PATCH carries; more changed since the last whole table and the whole table goes
   * again. Default 2,000: about 140 kB, a fifth of the whole table of 10k Apps.
   */
  readonly maxChangedLines?: number;
  /**
   * Most certificate lines a PATCH carries (a `k` line is 1–4 kB); more and the whole table goes.
   * Default 256: about 1 MB, which every worker parses once.
   */
  readonly maxChangedCertificateLines?: number;
}

/** A PushTarget for nginx with libnginx-mod-http-lua and the zero-hop nginx.conf. */
export function nginxTarget(options: NginxTargetOptions): PushTarget {
  const { socket } = options;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxLines = options.maxChangedLines ?? 2_000;
  const maxCertificateLines = options.maxChangedCertificateLines ?? 256;
  const get = (path: string) =>
    adminCall(socket, timeoutMs, { method: "GET", path, host: "nginx" });
  const send = (method: "PUT" | "PATCH", body: string) =>
    adminCall(socket, timeoutMs, {
      method,
      path: "/replica-mirror/table",
      host: "nginx",
      contentType: "text/plain",
      body,
    });
  // The PATCH bodies from the whole table nginx was last seen to take; null until then and after
  // a refused PATCH.
  let changesFromBase: NginxChanges | null = null;

  async function whole(view: PushView): Promise<Result<void, PushFailure>> {
    changesFromBase = null;
    const answer = await send("PUT", nginxTableBody(view));
    if (!answer.ok) return answer;
    if (answer.value.status !== 200 || !/^\d+$/.test(answer.value.text)) {
      return adminRefused("PUT", answer.value);
    }
    changesFromBase = nginxChanges(
      nginxBase(view, answer.value.text),
      maxLines,
      maxCertificateLines,
    );
    return ok(undefined);
  }

  return {
    name: options.name ?? "nginx",
    async push(view, pushOptions): Promise<Result<void, PushFailure>> {
      const changes =
        changesFromBase === null || pushOptions?.whole === true ? null : changesFromBase(view);
      if (changes === null) return whole(view);
      const answer: Result<AdminAnswer, PushFailure> = await send("PATCH", changes);
      if (!answer.ok) return answer;
      if (answer.value.status === 204) return ok(undefined);
      // nginx restarted, or holds a table it was given by someone else: the whole table.
      if (answer.value.status === 409) return whole(view);
      return adminRefused("PATCH", answer.value);
    },
    async held(): Promise<Result<number | null, PushFailure>> {
      const answer = await get("/replica-mirror/revision");
      if (!answer.ok) return answer;
      if (answer.value.status === 404) return ok(null);
      if (answer.value.status !== 200 || !/^\d+$/.test(answer.value.text)) {
        return adminRefused("GET revision", answer.value);
      }
      return ok(Number(answer.value.text));
    },
    async heldDigest(verify): Promise<Result<string | null, PushFailure>> {
      const answer = await get(`/replica-mirror/digest${verify?.deep === true ? "?deep=1" : ""}`);
      if (!answer.ok) return answer;
      if (answer.value.status === 404) return ok(null);
      if (answer.value.status !== 200 || !NGINX_DIGEST.test(answer.value.text)) {
        return adminRefused("GET digest", answer.value);
      }
      return ok(answer.value.text);
    },
    digestOf: cachedPer(nginxTableDigest),
    digestOfSliced: cachedPer(nginxTableDigestSliced),
  };
}
