import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import { caddyTarget } from "../push/caddy-target.ts";
import { haproxyTarget } from "../push/haproxy-target.ts";
import { nginxTarget } from "../push/nginx-target.ts";
import type { PushObserver } from "../push/observer.ts";
import { type Pusher, startPusher } from "../push/pusher.ts";
import type { PushTarget } from "../push/target.ts";
import type { PushTargetConfig } from "./config.ts";

/** The zero-hop pushers of one sidecar, one per configured proxy. */
export interface Pushers {
  /** Each proxy's pusher, the mirror's sink for it, in the order configured. */
  readonly sinks: readonly Pusher[];
  /** Each proxy by name, with the revision it answers from (null: none yet). */
  held(): readonly { readonly target: string; readonly revision: number | null }[];
  /** Resolves once each pusher's first verification has ended (`Pusher.firstVerified`). */
  readonly firstVerified: Promise<void>;
  close(): Promise<void>;
}

/**
 * The PushTarget of one configured proxy. Without `serveCertificates` it leaves the proxy's
 * certificates alone (ADR 56): an operator's own certificates stay where a view has none.
 */
export function targetOf(config: PushTargetConfig, serveCertificates: boolean): PushTarget {
  switch (config.kind) {
    case "haproxy":
      return haproxyTarget({
        socket: config.socket,
        map: config.map,
        credentialsMap: config.credentialsMap,
        ...(serveCertificates ? { crtList: config.crtList } : {}),
      });
    case "caddy":
      return caddyTarget({ socket: config.socket, certificates: serveCertificates });
    case "nginx":
      return nginxTarget({ socket: config.socket });
  }
}

/**
 * Starts a pusher for each of `targets` (README, "Zero-hop mode"); metrics hear every
 * event, the log the failures (at most once per target until a push lands again), lost tables
 * and every table changed behind the sidecar's back.
 */
export function startPushers(
  targets: readonly PushTarget[],
  o: { readonly clock: Clock; readonly metrics: PushObserver; readonly log: Logger },
): Pushers {
  const logged = new Set<string>();
  const observer: PushObserver = {
    pushed: (e) => {
      o.metrics.pushed(e);
      if (logged.delete(e.target))
        o.log.info({ target: e.target, revision: e.revision }, "proxy table pushed again");
    },
    failed: (e) => {
      o.metrics.failed(e);
      if (logged.has(e.target)) return;
      logged.add(e.target);
      o.log.warn(
        { target: e.target, operation: e.operation, reason: e.reason, err: e.message },
        "proxy table not pushed: trying again",
      );
    },
    lost: (e) => {
      o.metrics.lost(e);
      o.log.info(
        { target: e.target, expected: e.expected, held: e.held },
        "proxy lost its table: pushing it again",
      );
    },
    // Something else wrote the table (or it lost entries): worth a warning every time.
    drifted: (e) => {
      o.metrics.drifted(e);
      o.log.warn(
        { target: e.target, revision: e.revision },
        "proxy table changed behind the sidecar's back: pushing it whole again",
      );
    },
    held: (e) => o.metrics.held(e),
  };
  const pushers = targets.map((target) => startPusher({ target, clock: o.clock, observer }));
  return {
    sinks: pushers,
    held: () => pushers.map((pusher) => ({ target: pusher.name, revision: pusher.held() })),
    firstVerified: Promise.all(pushers.map((pusher) => pusher.firstVerified)).then(() => {}),
    close: async () => {
      await Promise.all(pushers.map((pusher) => pusher.close()));
    },
  };
}
