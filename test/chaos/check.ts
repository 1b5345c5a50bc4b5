/**
 * What each observed answer is checked against. The window is the list of cluster states since
 * the last quiescent point (that point's state included); every world write adds one.
 *
 * - At a quiescent point (faults off), each sidecar's whole world (every probe's `/v1/route`
 *   answer, with the credential a routed App's upstream gets where the sidecar serves them,
 *   `/v1/apps` with readiness, credential state and Secret resourceVersions, `/v1/snapshot`'s
 *   counts, Registry status and conflicts) must equal the model of the latest state within a
 *   deadline.
 * - While faults are active, an answer is allowed when it is what the spec serves for:
 *   - exact: one state of the window; or
 *   - skew: the Registry served at one state of the window (a whole document: the Apps of one
 *     document, never a mix) with the matched App's Secret as it was at another state of the
 *     window. The Registry and the App Secrets come from separate watches that may lag each
 *     other; the spec promises no cut across them, so this passes and is counted; or
 *   - unfetched: the matched App's Secret served as absent (or, beside credentials-off, without
 *     a resourceVersion) after this sidecar reported a failed fetch of newly referenced Secrets
 *     in the window (MirrorObserver.fetchFailed documents that they are served as unavailable
 *     until retried); passes and is counted.
 *   Anything else is a violation: an App set that is no document of the window, a readiness or
 *   Secret version the window never had, an answer from before the window, `not-synced` after
 *   the first Snapshot, an error or an off-contract answer.
 * The judge (judge.ts) adds the ordering checks: revisions and Registry resourceVersions never
 * go back, and each part of `/v1/apps` only moves forward through the window.
 */
import type { AppRecord } from "../../src/ops/records.ts";
import {
  type AppState,
  appRecords,
  appState,
  type ClusterState,
  matchHost,
  type ServedApp,
  type SidecarView,
  type SnapshotSummary,
  servedPartial,
  snapshotSummary,
} from "./model.ts";
import { answerKey, type Probe, routeAnswer } from "./route-answer.ts";

/** The sidecar facts the rules need. */
export interface Viewer extends SidecarView {
  /** A fetch failure was reported in the window. */
  readonly fetchFailed: boolean;
  /** The Registry reflector listed again in the window: it may have skipped values. */
  readonly registryRelisted: boolean;
  /**
   * It started again in the window with no Registry from before its first value: without a
   * state file, or from one that kept none beside its refused value. Beside a refused value it
   * may serve none, or not the refused Apps (ADR 4), as a new replica would.
   */
  readonly forgotLastGood?: boolean;
  /**
   * The Registry this sidecar serves at a state: the state's own, unless a relist made it skip
   * the last good value (see expectedAtQuiescence) and no good value was written since.
   */
  served(state: ClusterState): readonly ServedApp[];
}

type Verdict = "exact" | "skew" | "unfetched" | "violation";

/** The distinct served Registries of a window's states (or of any list), one per document. */
function registriesOf<T>(
  window: readonly T[],
  served: (state: T) => readonly ServedApp[],
): ServedApp[][] {
  const seen = new Map<string, ServedApp[]>();
  for (const s of window) {
    const key = JSON.stringify(served(s));
    if (!seen.has(key)) seen.set(key, [...served(s)]);
  }
  return [...seen.values()];
}

/**
 * The Registries a sidecar may serve at each state of the window: the state's own; and at a value
 * with a refused App entry, after a Registry relist in the window, its valid Apps with the refused
 * App as a Registry served before it had it: the relist may have skipped every value that put that
 * App in service (README, "The Registry document"), as `afterSkippedValues` allows at quiescence.
 */
function servedAt(window: readonly ClusterState[], viewer: Viewer): (readonly ServedApp[])[][] {
  return window.map((s, i) => {
    const own = viewer.served(s);
    const { registry } = s;
    const forgotten = viewer.forgotLastGood === true ? keptNothing(s) : [];
    if (!viewer.registryRelisted || registry.kind !== "partial")
      return registriesOf([own, ...forgotten], (apps) => apps);
    const skipped = registriesOf(window.slice(0, i), viewer.served).map((before) =>
      servedPartial(registry, before),
    );
    return registriesOf([own, ...skipped, ...forgotten], (apps) => apps);
  });
}

/**
 * What a state's Registry value serves to a sidecar that kept nothing before it: none beside a
 * value refused whole, its valid Apps alone beside one refusing some.
 */
function keptNothing(s: ClusterState): (readonly ServedApp[])[] {
  if (s.registry.kind === "bad") return [[]];
  if (s.registry.kind === "partial") return [servedPartial(s.registry, [])];
  return [];
}

/** The states (readiness, credential, resourceVersion) an App had over the window. */
function secretStates(window: readonly ClusterState[], app: ServedApp, viewer: Viewer): AppState[] {
  const out = new Map<string, AppState>();
  for (const s of window) {
    const at = appState(s, app, viewer);
    out.set(JSON.stringify(at), at);
  }
  return [...out.values()];
}

/** What an App whose Secret this sidecar could not fetch is served as: absent. */
const UNFETCHED: AppState = { reason: "secret-absent", credential: null, rv: null };

/** Classifies one `/v1/route` answer (its key, see answerKey). */
export function judgeRoute(
  window: readonly ClusterState[],
  probe: Probe,
  actual: string,
  viewer: Viewer,
): { verdict: Verdict; allowed: string[] } {
  const served = servedAt(window, viewer);
  const strict = new Set<string>();
  window.forEach((s, i) => {
    for (const apps of served[i]!)
      strict.add(answerKey(routeAnswer(apps, probe, (app) => appState(s, app, viewer))));
  });
  if (strict.has(actual)) return { verdict: "exact", allowed: [...strict] };
  const loose = new Set<string>();
  const unfetched = new Set<string>();
  for (const apps of registriesOf(served.flat(), (apps) => apps)) {
    for (const state of secretStatesFor(window, apps, probe, viewer)) {
      loose.add(answerKey(routeAnswer(apps, probe, () => state)));
    }
    if (viewer.fetchFailed) unfetched.add(answerKey(routeAnswer(apps, probe, () => UNFETCHED)));
  }
  if (loose.has(actual)) return { verdict: "skew", allowed: [...loose] };
  if (unfetched.has(actual)) return { verdict: "unfetched", allowed: [...loose, ...unfetched] };
  return { verdict: "violation", allowed: [...new Set([...loose, ...unfetched])] };
}

/** The states the App matching the probe had over the window (one entry when none matches). */
function secretStatesFor(
  window: readonly ClusterState[],
  apps: readonly ServedApp[],
  probe: Probe,
  viewer: Viewer,
): AppState[] {
  const matched = probe.host === null ? undefined : matchHost(apps, probe.host);
  const none: AppState = { reason: null, credential: null, rv: null };
  return matched === undefined ? [none] : secretStates(window, matched, viewer);
}

/** The declaration part of an App record: what one Registry document fixes. */
const declared = (r: AppRecord) =>
  JSON.stringify([r.name, r.hostnames, r.secretRef, r.upstream, r.credential?.prefix ?? null]);

/** A `/v1/apps` answer judged, with the states (global indices) each part of it fits. */
interface AppsJudgement {
  readonly verdict: Verdict;
  readonly detail: string;
  /** States whose served Registry declares exactly these Apps. */
  readonly registryAt: readonly number[];
  /** By `namespace/name:key`: states where that Secret gave the App's readiness and version. */
  readonly secretAt: ReadonlyMap<string, readonly number[]>;
}

/**
 * Classifies one `/v1/apps` answer: the Apps of exactly one served Registry of the window (never a
 * partial world), each with its Secret as it was at some state of the window. `windowStart` is
 * the global index of `window[0]`.
 */
export function judgeApps(
  window: readonly ClusterState[],
  windowStart: number,
  actual: readonly AppRecord[],
  viewer: Viewer,
): AppsJudgement {
  const shape = JSON.stringify(actual.map(declared));
  const registryAt: number[] = [];
  let registry: readonly ServedApp[] | undefined;
  const served = servedAt(window, viewer);
  window.forEach((s, i) => {
    const fits = served[i]!.find(
      (apps) => JSON.stringify(appRecords(apps, s, viewer).map(declared)) === shape,
    );
    if (fits === undefined) return;
    registryAt.push(windowStart + i);
    registry ??= fits;
  });
  const secretAt = new Map<string, number[]>();
  const none = { registryAt, secretAt };
  if (registry === undefined)
    return { verdict: "violation", detail: "the App set is no Registry of the window", ...none };
  let unfetched = false;
  for (const record of actual) {
    const app = registry.find((a) => a.name === record.name)!;
    const at: number[] = [];
    window.forEach((s, i) => {
      const { reason, rv } = appState(s, app, viewer);
      if (reason === record.reason && rv === record.secretResourceVersion) at.push(windowStart + i);
    });
    // After a failed fetch, a Secret not held may be one not fetched yet: absent, or without a
    // resourceVersion beside credentials-off, which no Secret changes. No order can be asked of it.
    const notHeld =
      record.reason === "secret-absent" ||
      (record.reason === "credentials-off" && record.secretResourceVersion === null);
    if (viewer.fetchFailed && notHeld) {
      if (at.length === 0) unfetched = true;
      continue;
    }
    if (at.length > 0) {
      secretAt.set(`${app.namespace}/${app.secretName}:${app.key}`, at);
      continue;
    }
    const states = secretStates(window, app, viewer);
    return {
      verdict: "violation",
      detail: `${record.name}: ${record.reason ?? "ready"} rv=${record.secretResourceVersion}, the window had ${JSON.stringify(states)}`,
      ...none,
    };
  }
  if (unfetched) return { verdict: "unfetched", detail: "", ...none };
  const together = registryAt.some((i) => [...secretAt.values()].every((at) => at.includes(i)));
  return { verdict: together ? "exact" : "skew", detail: "", ...none };
}

/** `/v1/snapshot` during faults: the Registry status names a state of the window. */
export function judgeSnapshotRegistry(
  window: readonly ClusterState[],
  registry: { present: boolean; resourceVersion: string | null; error: string | null },
): string | null {
  const fits = window.some(
    (s) =>
      s.registryRv === registry.resourceVersion &&
      (s.registry.kind !== "absent") === registry.present &&
      (s.registry.kind === "bad") === (registry.error !== null),
  );
  return fits ? null : `registry status ${JSON.stringify(registry)} is no state of the window`;
}

/** What a converged sidecar must show, for each Registry it may serve (usually exactly one). */
export interface Expected {
  readonly apps: AppRecord[];
  readonly summary: SnapshotSummary;
  readonly served: readonly ServedApp[];
  /** Each served App as the latest state has it: what its routes answer. */
  readonly state: (app: ServedApp) => AppState;
}

/**
 * The worlds a converged sidecar may show. The latest state's served Registry; and when the
 * sidecar relisted its Registry after the last good value it may have missed was written, the
 * Registries it may have kept instead (a relist shows only the present; README, "The Registry
 * document": what is kept is what this replica had in service).
 */
export function expectedAtQuiescence(
  window: readonly ClusterState[],
  viewer: Viewer & { readonly registryRelists: readonly number[] },
): Expected[] {
  const latest = window[window.length - 1]!;
  const expect = (served: readonly ServedApp[]): Expected => ({
    apps: appRecords(served, latest, viewer),
    summary: snapshotSummary(served, latest, viewer),
    served,
    state: (app) => appState(latest, app, viewer),
  });
  const forgotten = viewer.forgotLastGood === true ? keptNothing(latest) : [];
  return [viewer.served(latest), ...afterSkippedValues(window, viewer), ...forgotten].map(expect);
}

/**
 * What a sidecar whose relist skipped values may serve at the latest state. A value refused
 * whole: any Registry served in the window, the one it had kept. A value with a refused App
 * entry: its valid Apps, with the refused App as a Registry served before that value in the
 * window had it (or absent). None when no relist came after the last good value it may have
 * skipped, or when the value was written before the window (the last quiescent point settled it).
 */
function afterSkippedValues(
  window: readonly ClusterState[],
  viewer: Viewer & { readonly registryRelists: readonly number[] },
): (readonly ServedApp[])[] {
  const latest = window[window.length - 1]!;
  const relistedAfter = (index: number) => viewer.registryRelists.some((at) => at > index);
  const { registry } = latest;
  if (registry.kind === "bad")
    return relistedAfter(latest.lastGoodIndex) ? registriesOf(window, viewer.served) : [];
  if (registry.kind !== "partial") return [];
  const written = window.findIndex((s) => s.lastGoodIndex === latest.lastGoodIndex);
  if (written < 1 || !relistedAfter(window[written - 1]!.lastGoodIndex)) return [];
  return registriesOf(window.slice(0, written), viewer.served).map((before) =>
    servedPartial(registry, before),
  );
}
