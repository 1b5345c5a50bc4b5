import type { Registry } from "../registry/schema.ts";
import { build, rebuildForSecrets, routeTableFor } from "../snapshot/build.ts";
import { slotsOf } from "../snapshot/route-table.ts";
import {
  type BuildMeta,
  FROM_API_SERVER,
  type RegistryStatus,
  type RouteTable,
  type SecretLookup,
  type Snapshot,
} from "../snapshot/types.ts";
import type { Changes } from "./pending-changes.ts";

/** A Snapshot to publish, and how it was built. */
export interface NextSnapshot {
  readonly snapshot: Snapshot;
  /** `whole`: built from the Registry; `secrets`: only Apps of changed Secrets re-resolved. */
  readonly kind: "whole" | "secrets";
}

/** What the next Snapshot is built under besides its inputs: `BuildMeta` less what follows from them. */
export type NextMeta = Pick<
  BuildMeta,
  "builtAt" | "source" | "serveCredentials" | "serveCertificates" | "keptCertificates"
>;

/**
 * The Snapshot that follows `previous` after `changes`, read against `secrets`, or null when
 * nothing a Snapshot shows changed (so a rebuild with nothing to change publishes nothing). Built
 * whole for the first Snapshot and when the Registry document changed; otherwise only the Apps
 * of changed Secrets are re-resolved, under the newest Registry status; a new `source` alone
 * (a warm start's watches confirmed) also makes a new Snapshot. Pure: changes nothing.
 * `routesFor`: the route table of a Registry, when the caller keeps them.
 */
export function nextSnapshot(
  previous: Snapshot | null,
  changes: Changes,
  secrets: SecretLookup,
  at: NextMeta,
  routesFor: (registry: Registry | null) => RouteTable = routeTableFor,
): NextSnapshot | null {
  const { builtAt, serveCredentials = false, serveCertificates = false } = at;
  const source = at.source ?? FROM_API_SERVER;
  const adopted = changes.registry;
  const revision = (previous?.revision ?? 0) + 1;
  if (previous === null || adopted?.whole === true) {
    // Nothing to build from before the first Registry is adopted.
    if (adopted === null) return null;
    const kept = previous === null ? at.keptCertificates : undefined;
    const meta = {
      revision,
      builtAt,
      registry: adopted.status,
      source,
      serveCredentials,
      serveCertificates,
      ...(kept === undefined ? {} : { keptCertificates: kept }),
    };
    const routes = routesFor(adopted.registry);
    return { snapshot: build(adopted.registry, secrets, meta, previous, routes), kind: "whole" };
  }
  const status = adopted?.status ?? previous.registry;
  // A Secret no App references (one being fetched for a Registry not adopted yet) changes nothing.
  const changed = changes.secrets.filter(
    (s) => slotsOf(previous.routes, s.namespace, s.name).length > 0,
  );
  if (changed.length === 0 && sameStatus(status, previous.registry) && source === previous.source)
    return null;
  const meta = { revision, builtAt, registry: status, source, serveCredentials, serveCertificates };
  return { snapshot: rebuildForSecrets(previous, changed, secrets, meta), kind: "secrets" };
}

function sameStatus(a: RegistryStatus, b: RegistryStatus): boolean {
  return a.present === b.present && a.resourceVersion === b.resourceVersion && a.error === b.error;
}
