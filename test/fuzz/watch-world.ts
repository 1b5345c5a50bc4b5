// The world of the watch-stream fuzzer: three Apps in two namespaces, the actions a run mixes
// (Secret changes, Registry edits, garbage, chunking, drops, ends and pauses), and what a
// converged mirror must serve given what the API server holds.

import type { Envtest, GarbageKind } from "@replica-mirror/envtest";
import fc from "fast-check";
import { appState, type TestSidecar } from "../support/sidecar.ts";
import { writeRegistry } from "../support/world.ts";

/** The Apps, in the order the Registry lists them; a Registry write keeps a prefix. */
export const APPS = [
  {
    name: "shop",
    hostnames: ["shop.example.com"],
    namespace: "tenant-a",
    secret: "shop-credentials",
  },
  {
    name: "blog",
    hostnames: ["blog.example.com"],
    namespace: "tenant-b",
    secret: "blog-credentials",
  },
  {
    name: "wiki",
    hostnames: ["wiki.example.com"],
    namespace: "tenant-a",
    secret: "wiki-credentials",
  },
] as const;

/** One step of a generated run. */
type Action =
  | { readonly kind: "put"; readonly app: number; readonly value: string }
  | { readonly kind: "delete"; readonly app: number }
  | { readonly kind: "unrelated"; readonly value: string }
  | { readonly kind: "registry"; readonly apps: number }
  | { readonly kind: "garbage"; readonly garbage: GarbageKind }
  | {
      readonly kind: "chunking";
      readonly mode: "normal" | "split" | "coalesce";
      readonly seed: number;
    }
  | { readonly kind: "drop" }
  | { readonly kind: "end" }
  | { readonly kind: "pause"; readonly ms: number };

const appIndex = fc.nat({ max: APPS.length - 1 });
/** Any action, weighted towards changes and garbage. */
export const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      app: appIndex,
      value: fc.string({ maxLength: 12 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), app: appIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("unrelated" as const),
      value: fc.string({ maxLength: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("registry" as const),
      apps: fc.integer({ min: 1, max: APPS.length }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      garbage: fc.constantFrom<GarbageKind>("bytes", "truncated", "non-json"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("chunking" as const),
      mode: fc.constantFrom("normal" as const, "split" as const, "coalesce" as const),
      seed: fc.nat({ max: 1_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "drop" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "end" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      ms: fc.integer({ min: 0, max: 60 }),
    }),
  },
);

/** The state a converged mirror must serve, from what the API server holds. */
export function truth(envtest: Envtest, apps: number): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const a of APPS.slice(0, apps)) {
    const token = envtest.get(a.namespace, a.secret)?.data?.token;
    const value = token === undefined ? null : Buffer.from(token, "base64").toString("utf8");
    out[a.name] = value === "" ? null : value;
  }
  return out;
}

/** Each App's served value (null when not ready); undefined before the first Snapshot. */
export function served(m: TestSidecar): Record<string, string | null> | undefined {
  const s = m.holder.current();
  if (s === null) return undefined;
  const out: Record<string, string | null> = {};
  for (const a of APPS) {
    const st = appState(m.holder, a.name);
    if (typeof st === "object") out[a.name] = st.ready ? st.value : null;
  }
  return out;
}

/** Writes a Registry of the first `apps` Apps. */
export function writeApps(envtest: Envtest, apps: number): void {
  writeRegistry(
    envtest,
    APPS.slice(0, apps).map((a) => ({
      name: a.name,
      hostnames: [...a.hostnames],
      namespace: a.namespace,
      secret: a.secret,
      // Served credentials keep the values the fuzzer compares (ADR 68).
      credential: {},
    })),
  );
}

/** Applies one action; `state` tracks how many Apps the Registry holds. */
export function perform(
  envtest: Envtest,
  a: Action,
  state: { apps: number },
): Promise<void> | undefined {
  switch (a.kind) {
    case "put": {
      const app = APPS[a.app]!;
      envtest.apply({ namespace: app.namespace, name: app.secret, data: { token: a.value } });
      return;
    }
    case "delete": {
      const app = APPS[a.app]!;
      envtest.delete(app.namespace, app.secret);
      return;
    }
    case "unrelated":
      envtest.apply({ namespace: "tenant-a", name: "unrelated", data: { token: a.value } });
      return;
    case "registry":
      state.apps = a.apps;
      writeApps(envtest, a.apps);
      return;
    case "garbage":
      envtest.faults.injectGarbage(a.garbage);
      return;
    case "chunking":
      envtest.faults.chunking({ mode: a.mode, seed: a.seed });
      return;
    case "drop":
      envtest.faults.dropWatches();
      return;
    case "end":
      envtest.faults.endWatches();
      return;
    case "pause":
      return new Promise((r) => setTimeout(r, a.ms));
  }
}
