// The data thread answers from a view it builds out of the updates the main thread sends
// (ADR 27). After any sequence of Registry and Secret changes, that view must give every request
// the answer the Snapshot itself gives.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headerValue } from "../../src/answers/header-value.ts";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import {
  applyViewUpdate,
  type Routes,
  readRoutes,
  routesMessage,
  viewUpdate,
} from "../../src/route/view-update.ts";
import { allApps } from "../../src/snapshot/app-table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { RouteView, SecretData, Snapshot } from "../../src/snapshot/types.ts";
import { meta, registryOf, secretData } from "../support/world.ts";

const label = fc.constantFrom("a", "b", "shop", "xn--bcher-kva");
const hostname = fc.array(label, { minLength: 1, maxLength: 3 }).map((ls) => ls.join("."));
// A wildcard covers two labels or more, as the Registry admits.
const pattern = fc.oneof(
  hostname,
  hostname.filter((h) => h.includes(".")).map((h) => `*.${h}`),
);
const secretName = fc.constantFrom("s1", "s2", "s3");
const registryArb = fc
  .uniqueArray(
    fc.record({
      name: fc.constantFrom("a1", "a2", "b", "c", "d"),
      hostnames: fc.array(pattern, { minLength: 1, maxLength: 3 }),
      secret: secretName,
      upstream: fc.option(fc.constantFrom("http://a:80", "http://b b", "line\nbreak", ""), {
        nil: undefined,
      }),
      credential: fc.option(fc.constantFrom({ prefix: "Bearer " }, {}), { nil: undefined }),
    }),
    { selector: (a) => a.name, maxLength: 6 },
  )
  .map((apps) => registryOf(apps));
const step = fc.oneof(
  registryArb.map((registry) => ({ kind: "registry" as const, registry })),
  fc
    .record({
      secret: secretName,
      // A rotation (v1 to v2), a value less its line break, one that is not a header value.
      value: fc.option(fc.constantFrom("", "v1", "v2", "v2\n", "bad\rvalue"), { nil: undefined }),
    })
    .map((change) => ({ kind: "secret" as const, ...change })),
);
const requestHosts = ["a", "b.a", "x.shop", "shop.a", "x.y.b", "SHOP.", "shop:8080", "b.b.b", ""];

/** Every answer the view gives, for a fixed set of request hosts. */
function answers(view: RouteView | null): unknown[] {
  const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
  return requestHosts.map((h) => answer(view, ["Host", h]));
}

/** The update as the data thread receives it: a structured clone of what was sent. */
const overTheWire = <T>(value: T): T => structuredClone(value);

/**
 * Both ends of the messages, as thread.ts and worker.ts use them: routes sent whenever a
 * Snapshot's routes were not sent before, then its view; each message cloned on the way.
 */
function dataThreadOf(): (snapshot: Snapshot) => RouteView {
  let sent: Snapshot | null = null;
  let view: RouteView | null = null;
  let routes: { table: Snapshot["routes"]; id: number } | null = null;
  const received = new Map<number, Routes>();
  return (snapshot) => {
    if (routes?.table !== snapshot.routes) {
      routes = { table: snapshot.routes, id: (routes?.id ?? 0) + 1 };
      received.set(routes.id, readRoutes(overTheWire(routesMessage(routes.id, snapshot.routes))));
    }
    const update = overTheWire(viewUpdate(sent, snapshot, routes.id));
    view = applyViewUpdate(
      view,
      update,
      update.kind === "whole" ? received.get(update.routes) : undefined,
    );
    sent = snapshot;
    return view;
  };
}

describe("the data thread's view", () => {
  it("answers every request as the Snapshot does, after every step", () => {
    fc.assert(
      fc.property(
        registryArb,
        fc.array(step, { maxLength: 12 }),
        fc.boolean(),
        (first, steps, serveCredentials) => {
          const secrets = new SecretIndex<SecretData>();
          const serve = dataThreadOf();
          const metaAt = (revision: number) => ({ ...meta(revision), serveCredentials });
          let snapshot: Snapshot = build(first, secrets, metaAt(1));
          let view = serve(snapshot);
          let registry = first;
          for (const s of steps) {
            const m = metaAt(snapshot.revision + 1);
            if (s.kind === "registry") {
              registry = s.registry;
              snapshot = build(registry, secrets, m);
            } else {
              if (s.value === undefined) secrets.delete("apps", s.secret);
              else secrets.set("apps", s.secret, secretData({ token: s.value }));
              snapshot = rebuildForSecrets(
                snapshot,
                [{ namespace: "apps", name: s.secret }],
                secrets,
                m,
              );
            }
            view = serve(snapshot);
            expect(view.revision).toBe(snapshot.revision);
            expect(answers(view)).toEqual(answers(snapshot));
            expect([...allApps(view.apps)]).toEqual(
              [...allApps(snapshot.apps)].map(({ name, upstream, state, credential }) => ({
                upstream: upstream === null ? null : headerValue(upstream),
                name,
                state,
                credential,
              })),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("sends only the slots whose state or credential changed when the Registry did not", () => {
    const secrets = new SecretIndex<SecretData>();
    secrets.set("apps", "s1", secretData({ token: "v1" }));
    const registry = registryOf([
      { name: "a", hostnames: ["a.example.com"], secret: "s1" },
      { name: "b", hostnames: ["b.example.com"], secret: "s2", credential: { prefix: "Key " } },
    ]);
    const m = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const first = build(registry, secrets, m(1));
    const changed = [{ namespace: "apps", name: "s2" }];
    const next = (previous: Snapshot, value: string, revision: number) => {
      secrets.set("apps", "s2", secretData({ token: value }, String(revision)));
      return rebuildForSecrets(previous, changed, secrets, m(revision));
    };
    const second = next(first, "v2", 2);
    // The same credential under a new resourceVersion: nothing to send.
    const third = next(second, "v2\n", 3);
    const rotated = next(third, "v3", 4);
    const unusable = next(rotated, "v\r3", 5);
    expect([
      viewUpdate(null, first, 1),
      viewUpdate(first, second, 1),
      viewUpdate(second, third, 1),
      viewUpdate(third, rotated, 1),
      viewUpdate(rotated, unusable, 1),
    ]).toEqual([
      { kind: "whole", revision: 1, routes: 1, states: Uint8Array.of(0, 1), credentials: "\n" },
      { kind: "changes", revision: 2, changed: [[1, 0, "Key v2"]] },
      { kind: "changes", revision: 3, changed: [] },
      { kind: "changes", revision: 4, changed: [[1, 0, "Key v3"]] },
      { kind: "changes", revision: 5, changed: [[1, 2, null]] },
    ]);
  });

  it("refuses a view before its routes, and changes before a whole view: bugs", () => {
    const states = new Uint8Array(0);
    const whole = { kind: "whole", revision: 1, routes: 1, states, credentials: "" } as const;
    expect(() => applyViewUpdate(null, whole, undefined)).toThrow(
      "a view arrived before its routes (1)",
    );
    expect(() =>
      applyViewUpdate(null, { kind: "changes", revision: 2, changed: [] }, undefined),
    ).toThrow("a changes update arrived before any whole view");
  });
});
