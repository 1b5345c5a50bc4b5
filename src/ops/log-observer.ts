import type { Logger } from "pino";
import type { ReflectorStatus } from "../kube/cache/reflector-status.ts";
import type { MirrorObserver } from "../mirror/observer.ts";
import { listedRefusals } from "../registry/echo.ts";
import type { Conflict, RefusedAppStatus, RegistryStatus, Snapshot } from "../snapshot/types.ts";
import { type AppRefusal, enteredRefusals } from "./app-refusals.ts";

/** A normal watch turnover is debug; anything that cost a relist or an error is info or above. */
const RESTART_LEVEL: Readonly<Record<string, "debug" | "info" | "warn">> = {
  timeout: "debug",
  closed: "debug",
  dropped: "info",
  inactive: "warn",
  decode: "warn",
  expired: "info",
  throttled: "warn",
  error: "warn",
};

/**
 * Logs what an operator needs from the mirror: sync reached, Registry errors and hostname
 * conflicts once per change, an App that enters a credential or certificate refusal once, watch restarts with
 * their reason. Nothing it logs carries Secret bytes: it reads names, states and rules only.
 */
export function logObserver(log: Logger): MirrorObserver {
  let lastConflicts = "[]";
  let lastRefusedApps: readonly RefusedAppStatus[] = [];
  let lastRefused = "";
  let firstPublished = false;
  let last: Snapshot | null = null;
  return {
    synced() {
      log.info("initial lists complete: publishing the first Snapshot");
    },
    published({ snapshot, kind, buildMs, eventToSwapMs }) {
      const conflicts = JSON.stringify(snapshot.routes.conflicts);
      if (conflicts !== lastConflicts) {
        lastConflicts = conflicts;
        if (snapshot.routes.conflicts.length > 0) {
          log.warn(
            { conflicts: snapshot.routes.conflicts.map(describeConflict) },
            "hostname conflicts: the App whose name sorts first serves each",
          );
        } else {
          log.info("hostname conflicts resolved");
        }
      }
      // Most publishes carry the refusals of the one before: the same array, compared at once.
      if (snapshot.registry.refusedApps !== lastRefusedApps) {
        lastRefusedApps = snapshot.registry.refusedApps;
        const refused = refusalsLine(snapshot.registry);
        if (refused.key !== lastRefused) {
          lastRefused = refused.key;
          if (lastRefusedApps.length > 0)
            log.warn(
              refused.fields,
              "Registry App entries refused: the other Apps apply, and each refused one keeps its last good version",
            );
        }
      }
      for (const refusal of enteredRefusals(last, snapshot)) logRefusal(log, refusal);
      last = snapshot;
      const fields = {
        revision: snapshot.revision,
        kind,
        apps: snapshot.apps.size,
        readyApps: snapshot.apps.readyCount,
        hostnames: snapshot.routes.hostnameCount,
        buildMs: round(buildMs),
        eventToSwapMs: eventToSwapMs === null ? null : round(eventToSwapMs),
      };
      if (!firstPublished) {
        firstPublished = true;
        log.info(fields, "first Snapshot published: ready");
      } else {
        log.debug(fields, "Snapshot published");
      }
    },
    rebuildFailed(error) {
      log.error({ err: error }, "rebuild failed (bug): the previous Snapshot is still served");
    },
    adoptionFailed(error) {
      log.error({ err: error }, "Registry adoption failed (bug): the served Registry stays");
    },
    reflector(name, status) {
      logReflector(log, name, status);
    },
    registryRejected(message) {
      log.error({ err: message }, "Registry refused: the last good Registry is still served");
    },
    fetchFailed(count, message) {
      log.warn(
        { count, err: message },
        "could not fetch newly referenced Secrets: their Apps answer 503 until a retry succeeds",
      );
    },
  };
}

function logRefusal(log: Logger, refusal: AppRefusal): void {
  switch (refusal.state) {
    case "credentials-off":
      log.warn(
        { app: refusal.app },
        "App has a credential and --serve-credentials is off: it answers 503 credentials-off",
      );
      return;
    case "secret-unusable":
      log.warn(
        { app: refusal.app, reason: refusal.reason, rule: refusal.rule },
        "App's Secret value cannot be its Authorization header: it answers 503 secret-unusable",
      );
      return;
    case "certificates-off":
      log.warn(
        { app: refusal.app },
        "App has tls and --serve-certificates is off: its hostnames get the proxy's default certificate",
      );
      return;
    case "certificate-refused": {
      const { app, reason, rule, hostname, lastGoodKept } = refusal;
      log.warn(
        { app, reason, rule, ...(hostname === null ? {} : { hostname }) },
        lastGoodKept
          ? "App's TLS Secret holds a certificate that cannot be served: its last good certificate is still served"
          : "App's TLS Secret holds no certificate that can be served: its hostnames get the proxy's default certificate",
      );
    }
  }
}

function logReflector(log: Logger, reflector: string, status: ReflectorStatus): void {
  switch (status.kind) {
    case "listed":
      log.debug(
        {
          reflector,
          mode: status.mode,
          resourceVersion: status.resourceVersion,
          items: status.items,
          ...(status.mode === "list" ? { pages: status.pages } : {}),
        },
        "listed",
      );
      return;
    case "streaming-refused":
      log.info(
        { reflector, err: status.error },
        "the API server refuses streaming lists (WatchList): every reflector lists instead",
      );
      return;
    case "watch-restart":
      log[RESTART_LEVEL[status.reason] ?? "info"](
        {
          reflector,
          reason: status.reason,
          resourceVersion: status.resourceVersion,
          events: status.events,
        },
        "watch restarted",
      );
      return;
    case "relist":
      log.info({ reflector, reason: status.reason }, "relisting");
      return;
    case "backoff":
      log.info({ reflector, delayMs: Math.round(status.delayMs) }, "backing off");
      return;
    case "error":
      log.warn({ reflector, phase: status.phase, err: status.error }, "watch error");
      return;
    case "handler-error":
      log.error(
        { reflector, event: status.event, key: status.key, err: status.error },
        "handler failed (bug)",
      );
      return;
  }
}

/**
 * The refusals as a log line carries them, bounded (the first few, and how many more), and a key
 * that changes when they do: the value they came from, and which of them kept a version.
 */
function refusalsLine(registry: RegistryStatus): {
  readonly fields: Record<string, unknown>;
  readonly key: string;
} {
  const { listed, more } = listedRefusals(registry.refusedApps);
  const fields = { refusedApps: listed, moreRefusedApps: more };
  let kept = "";
  for (const r of registry.refusedApps) kept += r.kept ? "1" : "0";
  return { fields, key: `${registry.contentHash}:${kept}:${JSON.stringify(listed)}` };
}

const describeConflict = (c: Conflict) =>
  `${c.hostname}: ${c.winner} wins over ${c.losers.join(", ")}`;
const round = (ms: number) => Math.round(ms * 1000) / 1000;
