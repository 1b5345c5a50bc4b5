// A warm start's two halves: the inputs a mirror saves, and how a new mirror takes them back.

import type { Reflector, ResumePoint } from "../kube/cache/reflector.ts";
import type { Registry } from "../registry/schema.ts";
import { keptOf } from "../snapshot/app-certificate.ts";
import type { KeptCertificate, Snapshot } from "../snapshot/types.ts";
import type { SecretScope } from "./fetch-secrets.ts";
import type { MirrorInputs, WatchPositions } from "./inputs.ts";
import type { ReferencedSecrets } from "./referenced-secrets.ts";
import type { RegistryTracker } from "./registry-tracker.ts";
import type { SecretStore } from "./secret-store.ts";

/** Where each reflector resumes once the saved App Secrets are seeded. */
interface Resumes {
  readonly registry: ResumePoint;
  /** By scope; undefined for a scope the inputs do not know, which is listed instead. */
  readonly scopes: readonly (ResumePoint | undefined)[];
}

type RegistryRef = { readonly namespace: string; readonly name: string; readonly key: string };

/**
 * Gives the tracker the saved Registry Secret, as if the watch had just delivered it, with the
 * check and the kept Registry saved beside it (adopted when made under the tracker's rules, ADRs
 * 77 and 91), and says what it serves: the first half of seeding, whose routes the data thread
 * can index while the second half runs (ADR 73).
 */
export function seedRegistry(
  inputs: MirrorInputs,
  ref: RegistryRef,
  tracker: RegistryTracker,
): ReturnType<RegistryTracker["serve"]> {
  const saved = inputs.registry;
  if (saved.present) {
    const data: Record<string, string> = Object.create(null);
    if (saved.value !== null) data[ref.key] = saved.value;
    const metadata = {
      namespace: ref.namespace,
      name: ref.name,
      resourceVersion: saved.resourceVersion,
    };
    tracker.observeSaved(
      { metadata, data },
      {
        ...(inputs.checked === undefined ? {} : { checked: inputs.checked }),
        ...(inputs.kept === undefined ? {} : { kept: inputs.kept }),
      },
    );
  }
  return tracker.serve();
}

/**
 * Gives the store the saved App Secrets referenced by `served`, as if the watches had just
 * delivered them, and says where each reflector resumes: from the saved resourceVersion, knowing
 * exactly the objects seeded.
 */
export function seedSecrets(
  inputs: MirrorInputs,
  sources: {
    readonly registry: RegistryRef;
    readonly secrets: { readonly scopes: readonly SecretScope[] };
  },
  served: Registry | null,
  referenced: ReferencedSecrets,
): Resumes {
  const {
    registry: ref,
    secrets: { scopes },
  } = sources;
  referenced.watch(served);
  // Each saved Secret goes to the reflector of its scope in the same one pass: a filter of every
  // Secret per scope made a start with many namespaces O(Secrets x namespaces).
  const known = new Map(scopes.map((scope) => [scope.namespace, new KnownSecrets()]));
  const clusterWide = known.get(null);
  for (const s of inputs.secrets) {
    const metadata = { namespace: s.namespace, name: s.name, resourceVersion: s.resourceVersion };
    referenced.store.apply("upsert", { metadata, data: s.data }, "watch");
    (clusterWide ?? known.get(s.namespace))?.add(s.namespace, s.name, s.resourceVersion);
  }
  const saved = inputs.registry;
  return {
    registry: {
      resourceVersion: inputs.watches.registry,
      known: saved.present ? [[`${ref.namespace}/${ref.name}`, saved.resourceVersion]] : [],
    },
    scopes: scopes.map((scope) => {
      const resourceVersion = inputs.watches.secrets.find(
        (w) => w.namespace === scope.namespace,
      )?.resourceVersion;
      if (resourceVersion === undefined) return undefined;
      return { resourceVersion, known: known.get(scope.namespace)! };
    }),
  };
}

/** A Secret a resumed reflector knows: its `namespace/name` and resourceVersion. */
type Known = readonly [key: string, resourceVersion: string];

/**
 * The Secrets one resumed reflector knows, keyed only when it first reads them (after ready: a
 * `namespace/name` string per Secret is 100k strings at start, KnownVersions.seed).
 */
class KnownSecrets implements Iterable<Known> {
  /** Namespace, name and resourceVersion of each in turn. */
  readonly #flat: string[] = [];

  add(namespace: string, name: string, resourceVersion: string): void {
    this.#flat.push(namespace, name, resourceVersion);
  }

  *[Symbol.iterator](): Iterator<Known> {
    const flat = this.#flat;
    for (let i = 0; i < flat.length; i += 3)
      yield [`${flat[i]}/${flat[i + 1]}`, flat[i + 2]!] as const;
  }
}

type Reflectors = { readonly registry: Reflector; readonly secrets: readonly Reflector[] };

/**
 * The tracker's Registry Secret, its check and the Registry kept beside it, the store's App
 * Secrets, each reflector's resourceVersion, and the last good certificates `snapshot` (built
 * from them; null: a replica not serving certificates) keeps beside refused ones.
 */
export function captureInputs(
  tracker: RegistryTracker,
  store: SecretStore,
  reflectors: Reflectors,
  scopes: readonly SecretScope[],
  snapshot: Snapshot | null,
): MirrorInputs {
  const inputs = {
    registry: tracker.current,
    secrets: store.present(),
    watches: watchPositions(reflectors, scopes),
  };
  const { checked, kept } = tracker;
  const certificates = snapshot === null ? [] : keptCertificates(snapshot);
  return {
    ...inputs,
    ...(checked === null ? {} : { checked }),
    ...(kept === null ? {} : { kept }),
    ...(certificates.length === 0 ? {} : { certificates }),
  };
}

/**
 * The last good certificates of the Apps whose own is refused: a walk of every App, which a state
 * write makes at most every 5 s (3.4 ms at 100k Apps, ADR 92).
 */
function keptCertificates(snapshot: Snapshot): KeptCertificate[] {
  const out: KeptCertificate[] = [];
  for (const chunk of snapshot.apps.chunks)
    for (const app of chunk) {
      const kept = app.certificate === null ? null : keptOf(app);
      if (kept !== null) out.push(kept);
    }
  return out;
}

/** Each reflector's resourceVersion: the Registry's, then each scope's. */
export function watchPositions(
  reflectors: Reflectors,
  scopes: readonly SecretScope[],
): WatchPositions {
  return {
    registry: reflectors.registry.lastSyncResourceVersion(),
    secrets: scopes.map((scope, i) => ({
      namespace: scope.namespace,
      resourceVersion: reflectors.secrets[i]!.lastSyncResourceVersion(),
    })),
  };
}
