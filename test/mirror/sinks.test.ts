// The mirror's sinks (ADR 63): each published Snapshot reaches every sink in the order
// registered, after the holder swapped it in, with the watch positions it reflects; the API
// server's contact tells them where the watches stand when nothing changed.

import { afterEach, describe, expect, it } from "vitest";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { Mirror, type Reflected, type SnapshotSink } from "../../src/mirror/mirror.ts";
import { ok } from "../../src/result.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import {
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registrySource,
} from "../support/world.ts";

const registryLw = () => {
  const lw = new FakeListWatch();
  const doc = registryDoc([
    { name: "shop", hostnames: ["shop.example.com"], namespace: "default" },
  ]);
  lw.replyList(
    ok(
      page("5", [
        {
          metadata: { namespace: REGISTRY_NS, name: REGISTRY_NAME, resourceVersion: "5" },
          data: { [REGISTRY_KEY]: JSON.stringify(doc) },
        },
      ]),
    ),
  );
  return lw;
};

/** What a sink was told, as comparable lines. */
function recorder(name: string, holder: SnapshotHolder, told: string[]): SnapshotSink {
  const what = (r: Reflected | null) =>
    r === null
      ? "not whole"
      : `${r.positions.registry}/${r.positions.secrets.map((s) => s.resourceVersion).join()} ${[...r.inputs().secrets].map((s) => `${s.name}@${s.resourceVersion}`).join()}`;
  return {
    name,
    prepare: (routes) => told.push(`${name} prepare ${routes().names.join()}`),
    publish: (snapshot, reflected) =>
      told.push(
        `${name} r${snapshot.revision} swapped:${holder.current() === snapshot} ${what(reflected)}`,
      ),
    heard: (reflected) => told.push(`${name} heard ${what(reflected)}`),
  };
}

const mirrors: Mirror[] = [];
afterEach(async () => {
  await Promise.all(mirrors.splice(0).map((m) => m.stop()));
});

describe("the mirror's sinks", () => {
  it("get each Snapshot in order after the swap, with what it reflects, and the watches' positions on contact", async () => {
    const holder = new SnapshotHolder();
    const secrets = new FakeListWatch();
    secrets.replyList(ok(page("7", [secret("shop-credentials", "6", { token: "t" })])));
    const told: string[] = [];
    const mirror = new Mirror({
      registry: registrySource(registryLw()),
      secrets: { scopes: [{ namespace: null, listWatch: secrets }] },
      holder,
      watchTimeoutSeconds: 60,
      reflector: { streamingLists: new StreamingLists(false) },
      sinks: [recorder("a", holder, told), recorder("b", holder, told)],
    });
    mirrors.push(mirror);
    mirror.start();
    await waitUntil(() => (told.some((l) => l.startsWith("b r1")) ? true : undefined));
    await waitUntil(() => (secrets.watches.length > 0 ? true : undefined));
    secrets.current.bookmark("9");
    await waitUntil(() => (told.some((l) => l.startsWith("b heard 5/9")) ? true : undefined));
    secrets.current.modify(secret("shop-credentials", "10", { token: "u" }));
    await waitUntil(() => (told.some((l) => l.startsWith("b r2")) ? true : undefined));
    // Before the first Snapshot, contact finds no whole to reflect.
    const first = told.findIndex((l) => l.startsWith("a r1"));
    expect(told.slice(0, first).filter((l) => !l.endsWith("heard not whole"))).toEqual([
      "a prepare shop",
      "b prepare shop",
    ]);
    expect(told.slice(first).filter((l) => !l.includes("heard 5/7"))).toEqual([
      "a r1 swapped:true 5/7 shop-credentials@6",
      "b r1 swapped:true 5/7 shop-credentials@6",
      "a heard 5/9 shop-credentials@6",
      "b heard 5/9 shop-credentials@6",
      // The event's change waits for the rebuild: not one whole until it is published.
      "a heard not whole",
      "b heard not whole",
      "a r2 swapped:true 5/10 shop-credentials@10",
      "b r2 swapped:true 5/10 shop-credentials@10",
    ]);
  });

  it("hear from each first list once, as it completes, not once per listed Secret", async () => {
    const holder = new SnapshotHolder();
    const secrets = new FakeListWatch();
    const listed = Array.from({ length: 50 }, (_, i) =>
      secret(i === 0 ? "shop-credentials" : `other-${i}`, String(i + 1), { token: "t" }),
    );
    secrets.replyList(ok(page("60", listed)));
    const told: string[] = [];
    const mirror = new Mirror({
      registry: registrySource(registryLw()),
      secrets: { scopes: [{ namespace: null, listWatch: secrets }] },
      holder,
      watchTimeoutSeconds: 60,
      reflector: { streamingLists: new StreamingLists(false) },
      sinks: [recorder("a", holder, told)],
    });
    mirrors.push(mirror);
    mirror.start();
    await waitUntil(() => (told.some((l) => l.startsWith("a r1")) ? true : undefined));
    const first = told.findIndex((l) => l.startsWith("a r1"));
    // The Registry's list and the App Secrets' (listed while the Registry is checked, ADR 88).
    expect(told.slice(0, first).sort()).toEqual([
      "a heard not whole",
      "a heard not whole",
      "a prepare shop",
    ]);
  });
});
