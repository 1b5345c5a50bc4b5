import type { AppSpec, Registry, SecretRef } from "../registry/schema.ts";
import { keptBefore } from "./app-certificate.ts";
import { appAt, buildAppTable, replaceApps, resolveApp } from "./app-table.ts";
import { buildRouteTable, slotOf, slotsOf, sortedSpecs } from "./route-table.ts";
import {
  type App,
  type BuildMeta,
  FROM_API_SERVER,
  type RouteTable,
  type SecretLookup,
  type Snapshot,
} from "./types.ts";

/**
 * Builds a whole Snapshot from a Registry (null: none, an empty Registry) and the Secrets this
 * replica sees. Pure and deterministic whatever the order of Apps in the document; the result is
 * frozen and shares nothing mutable with its inputs. `previous`: the Snapshot before, whose Apps'
 * certificates an App of the same name keeps where its own is refused (ADR 56); with none, the
 * certificates `meta.keptCertificates` kept for them (ADR 92). `routes`: the
 * Registry's route table when the caller built it already (`routeTableFor`).
 */
export function build(
  registry: Registry | null,
  secrets: SecretLookup,
  meta: BuildMeta,
  previous: Snapshot | null = null,
  routes: RouteTable = routeTableFor(registry),
): Snapshot {
  const kept = meta.keptCertificates;
  const before =
    previous !== null
      ? (spec: AppSpec) => {
          const slot = slotOf(previous.routes, spec.name);
          return slot === undefined ? undefined : appAt(previous.apps, slot);
        }
      : kept !== undefined
        ? (spec: AppSpec) => {
            const k = kept.get(spec.name);
            return k === undefined ? undefined : keptBefore(k);
          }
        : undefined;
  const apps = buildAppTable(routes.specs, secrets, meta, before);
  return seal(meta, routes, apps);
}

/**
 * The hostname side of every Snapshot built from `registry`: it derives from the Registry alone
 * and is frozen, so the Snapshots of one Registry may share it.
 */
export function routeTableFor(registry: Registry | null): RouteTable {
  return buildRouteTable(sortedSpecs(registry));
}

/**
 * The next Snapshot after some Secrets changed and the Registry did not: re-resolves only the Apps
 * that reference a changed Secret and shares everything else with `previous`. Equal to `build`
 * of the same inputs and `previous` (the differential test pins this).
 */
export function rebuildForSecrets(
  previous: Snapshot,
  changedSecrets: Iterable<SecretRef>,
  secrets: SecretLookup,
  meta: BuildMeta,
): Snapshot {
  const { routes } = previous;
  const replacements = new Map<number, App>();
  for (const { namespace, name } of changedSecrets) {
    for (const slot of slotsOf(routes, namespace, name)) {
      replacements.set(
        slot,
        resolveApp(routes.specs[slot]!, secrets, meta, appAt(previous.apps, slot)),
      );
    }
  }
  return seal(meta, routes, replaceApps(previous.apps, replacements));
}

function seal(meta: BuildMeta, routes: Snapshot["routes"], apps: Snapshot["apps"]): Snapshot {
  return Object.freeze({
    revision: meta.revision,
    builtAt: meta.builtAt,
    source: meta.source ?? FROM_API_SERVER,
    registry: Object.freeze({ ...meta.registry }),
    routes,
    apps,
  });
}
