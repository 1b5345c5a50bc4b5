// The zero-hop table pushed into Caddy through its admin API on a Unix socket: one PATCH of the
// server's routes, which Caddy applies as a whole new configuration (it reloads every change that
// way), so requests see the old routes or the new ones. A Caddy started from its configuration
// file holds the not-synced routes, which have no revision. A verification reads the routes back
// (GET) and compares them, key order aside, with the routes pushed.
//
// Served certificates (ADR 56, caddy-certificates.ts) go before the routes, and only when they
// differ from what Caddy was last seen to take: each request is one more reload of the whole
// configuration, so a view without certificates costs what it did. A rotation is one entry of
// `load_pem`. The verification also reads the policies and `load_pem` back; their keys are read
// into memory there and nowhere else, and never reach a message.

import { cachedPer } from "../cached-per.ts";
import { err, ok, type Result } from "../result.ts";
import type { PushView, RouteView } from "../snapshot/types.ts";
import { type AdminAnswer, adminCall, adminRefused } from "./admin-http.ts";
import {
  type CaddyCertificates,
  caddyCertificates,
  certificateRefused,
  certificateRequests,
  certificatesDigest,
  digestOfCertificates,
  holdsNoCertificates,
  LOAD_PEM_PATH,
  NO_CERTIFICATES,
  POLICIES_PATH,
} from "./caddy-certificates.ts";
import {
  caddyRoutes,
  holdsRevision,
  parseCaddyRevision,
  REVISION_ID,
  ROUTES_PATH,
} from "./caddy-routes.ts";
import { certificateEntries } from "./certificates.ts";
import { tableOf } from "./table.ts";
import { canonicalJson, sha256 } from "./table-digest.ts";
import type { PushFailure, PushOptions, PushTarget } from "./target.ts";

export interface CaddyTargetOptions {
  readonly name?: string;
  /** The admin API's Unix socket, as caddy.json's `admin.listen` (`unix//<path>`) names it. */
  readonly socket: string;
  /** For one push: Caddy reloads its whole configuration, about 0.15 s for 10k Apps. */
  readonly pushTimeoutMs?: number;
  readonly checkTimeoutMs?: number;
  /** Most table keys in one lookup group (caddy-key-routes.ts): default about 3 √keys. */
  readonly groupSize?: number;
  /**
   * Whether it keeps Caddy's certificates (`--serve-certificates`); default true. False: pushes
   * and verifications leave the TLS app and the connection policies as Caddy holds them.
   */
  readonly certificates?: boolean;
}

/** A PushTarget for Caddy 2.6+ over its admin API, with the zero-hop caddy.json. */
export function caddyTarget(options: CaddyTargetOptions): PushTarget {
  const { socket } = options;
  const pushTimeoutMs = options.pushTimeoutMs ?? 30_000;
  const checkTimeoutMs = options.checkTimeoutMs ?? 2_000;
  const routesOptions = options.groupSize === undefined ? {} : { groupSize: options.groupSize };
  const routesOf = (view: RouteView) => caddyRoutes(tableOf(view), routesOptions);
  const certificatesOf = cachedPer((view: PushView) => caddyCertificates(certificateEntries(view)));
  const routesDigestOf = cachedPer((view: PushView) => sha256(canonicalJson(routesOf(view))));
  const keepsCertificates = options.certificates ?? true;
  // The certificates Caddy was last seen to take; null: unknown (a request failed, or Caddy
  // restarted and holds its file's, which a push then assumes).
  let heldCertificates: CaddyCertificates | null = null;
  let pushedRevision: number | null = null;
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
    async push(view: PushView, options?: PushOptions): Promise<Result<void, PushFailure>> {
      if (keepsCertificates) {
        const certificates = await pushCertificates(view, options?.whole === true);
        if (!certificates.ok) return certificates;
      }
      const body = JSON.stringify(routesOf(view));
      const answer = await call("PATCH", ROUTES_PATH, pushTimeoutMs, body);
      if (!answer.ok) return answer;
      if (answer.value.status !== 200) return adminRefused("PATCH", answer.value);
      pushedRevision = view.revision;
      return ok(undefined);
    },
    held: () => readRevision(),
    async heldDigest(): Promise<Result<string | null, PushFailure>> {
      // The routes as Caddy holds them (0.9 MB at 10k Apps), its objects' keys in its own order.
      const answer = await call("GET", ROUTES_PATH, pushTimeoutMs);
      if (!answer.ok) return answer;
      if (answer.value.status !== 200) return adminRefused("GET routes", answer.value);
      const parsed = json("GET routes", answer.value);
      if (!parsed.ok) return parsed;
      // The configuration file's not-synced routes: nothing pushed.
      if (!holdsRevision(parsed.value)) return ok(null);
      const routes = sha256(canonicalJson(parsed.value));
      if (!keepsCertificates) return ok(routes);
      const policies = await getJson(POLICIES_PATH, "GET policies");
      if (!policies.ok) return policies;
      const loadPem = await getJson(LOAD_PEM_PATH, "GET certificates");
      if (!loadPem.ok) return loadPem;
      if (holdsNoCertificates(policies.value, loadPem.value)) return ok(routes);
      return ok(sha256(`${routes}\n${certificatesDigest(policies.value, loadPem.value)}`));
    },
    digestOf: cachedPer((view: PushView) => {
      const certificates = certificatesOf(view);
      if (!keepsCertificates || certificates.loaded.length === 0) return routesDigestOf(view);
      return sha256(`${routesDigestOf(view)}\n${digestOfCertificates(certificates)}`);
    }),
  };

  /** Caddy's answer to GET `path` as JSON. Its text may hold keys: never in a message. */
  async function getJson(path: string, what: string): Promise<Result<unknown, PushFailure>> {
    const answer = await call("GET", path, pushTimeoutMs);
    if (!answer.ok) return answer;
    if (answer.value.status !== 200) return certificateRefused(what, answer.value);
    return json(what, answer.value);
  }

  /** Whether Caddy holds no served certificate: the file's policies and an empty `load_pem`. */
  async function heldNone(): Promise<Result<boolean, PushFailure>> {
    const policies = await getJson(POLICIES_PATH, "GET policies");
    if (!policies.ok) return policies;
    const loadPem = await getJson(LOAD_PEM_PATH, "GET certificates");
    if (!loadPem.ok) return loadPem;
    return ok(holdsNoCertificates(policies.value, loadPem.value));
  }

  /** The revision of the routes Caddy holds; null when it holds its file's. */
  async function readRevision(): Promise<Result<number | null, PushFailure>> {
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
  }

  /**
   * Makes Caddy hold `view`'s certificates with the fewest requests: from what it was last seen
   * to take; from its file's (none) when it restarted since; everything when that is unknown or
   * `whole` (but nothing when Caddy is found to hold none and `view` has none). A view without
   * certificates, while none were pushed, sends nothing.
   */
  async function pushCertificates(
    view: PushView,
    whole: boolean,
  ): Promise<Result<void, PushFailure>> {
    const next = certificatesOf(view);
    let from: CaddyCertificates | null = null;
    if (whole && next.loaded.length === 0) {
      // Two GETs rather than two reloads when Caddy holds no certificate, as it does unless
      // another writer gave it some.
      const held = await heldNone();
      if (!held.ok) return held;
      if (held.value) {
        heldCertificates = next;
        return ok(undefined);
      }
    } else if (!whole) {
      if (next.loaded.length === 0 && (heldCertificates?.loaded.length ?? 0) === 0) {
        return ok(undefined);
      }
      // A Caddy restarted since the last push holds its file's certificates, whatever this
      // client saw it take.
      const revision = await readRevision();
      if (!revision.ok) return revision;
      from = revision.value === pushedRevision ? heldCertificates : NO_CERTIFICATES;
    }
    const requests = certificateRequests(from, next);
    heldCertificates = null;
    for (const request of requests) {
      const answer = await call("PATCH", request.path, pushTimeoutMs, request.body());
      if (!answer.ok) return answer;
      if (answer.value.status !== 200)
        return certificateRefused("PATCH certificates", answer.value);
    }
    heldCertificates = next;
    return ok(undefined);
  }
}
