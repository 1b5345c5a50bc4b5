// The log line that closes a start from a rolled-back state file (README, "The state file").

import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { MirrorObserver } from "../mirror/observer.ts";
import type { Mark } from "../state/mark.ts";

/** A served state that is not the newest its pod wrote, against the newest (the mark). */
export interface RolledBack {
  readonly reason: "older" | "other-series";
  /** The served state's Registry resourceVersion; null: absent. */
  readonly registry: string | null;
  readonly newest: Mark;
}

/**
 * After a start that served a state older than the newest this pod wrote: one line once the
 * watches confirmed the API server's inputs, with how long the old state was served, its
 * Registry, the newest one the mark recorded and the API server's. Nothing otherwise.
 */
export function rolledBackObserver(
  opened: { readonly rolledBack: RolledBack | undefined } | null,
  log: Logger,
  clock: Clock,
): MirrorObserver {
  const rolledBack = opened?.rolledBack;
  if (rolledBack === undefined) return {};
  const since = clock.now();
  let told = false;
  return {
    published({ snapshot }) {
      if (told || snapshot.source.kind !== "api-server") return;
      told = true;
      const { reason, registry, newest } = rolledBack;
      log.warn(
        {
          reason,
          servedMs: Math.round(clock.now() - since),
          registry,
          newestRegistry: newest.registry,
          apiServerRegistry: snapshot.registry.resourceVersion,
          // Told by the mark's series and count, not by the opaque resourceVersions.
          servedOlderRegistry: reason === "older" && registry !== newest.registry,
        },
        "rolled-back state file replaced by the API server's inputs",
      );
    },
  };
}
