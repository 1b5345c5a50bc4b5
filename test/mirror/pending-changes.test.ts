import { describe, expect, it } from "vitest";
import { NO_CHANGES, PendingChanges } from "../../src/mirror/pending-changes.ts";
import type { ServedRegistry } from "../../src/mirror/registry-tracker.ts";
import { registryOf, registryStatus } from "../support/world.ts";

const served = (resourceVersion: string, error: string | null = null): ServedRegistry => ({
  registry: registryOf([{ name: "a", hostnames: ["a.x"] }]),
  status: registryStatus(resourceVersion, error),
});
const ref = (name: string) => ({ namespace: "ns", name });

describe("PendingChanges", () => {
  it("hands over everything marked in one value and is empty afterwards", () => {
    const p = new PendingChanges();
    p.secretsChanged([ref("a")], 20);
    p.secretsChanged([ref("b"), ref("a")], 10);
    p.secretsChanged([ref("fetched")], null);
    expect([p.take(), p.take()]).toEqual([
      { registry: null, secrets: [ref("a"), ref("b"), ref("a"), ref("fetched")], since: 10 },
      NO_CHANGES,
    ]);
  });

  it("keeps the newest adopted Registry, whole if any adoption since the last take was", () => {
    const p = new PendingChanges();
    const second = served("2", "refused");
    const tracked = { ...second, newlyRefused: true };
    p.registryAdopted(served("1"), true);
    p.registryAdopted(tracked, false);
    const taken = p.take();
    p.registryAdopted(served("3"), false);
    expect([taken.registry, p.take().registry]).toEqual([
      { ...second, whole: true },
      { ...served("3"), whole: false },
    ]);
  });

  it("dates a Registry event from its receipt, but only once its Registry is adopted", () => {
    const p = new PendingChanges();
    p.registryReceived(5);
    p.registryReceived(7);
    p.secretsChanged([ref("a")], 9);
    const beforeAdoption = p.take();
    p.registryAdopted(served("1"), true);
    expect([beforeAdoption.since, p.take().since, p.take().since]).toEqual([9, 5, null]);
  });
});
