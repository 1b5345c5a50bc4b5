// A warm start adopts the Registry's saved check instead of checking the saved value again, only
// when the check was made under this start's rules and options, from this very value (ADR 77);
// otherwise it checks the value as the watch would have delivered it. A mirror saves the check of
// the value it serves beside the value.

import { describe, expect, it } from "vitest";
import type { CheckedRegistry, MirrorInputs } from "../../src/mirror/inputs.ts";
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from "../../src/registry/parse.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import { ok } from "../../src/result.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { firstWarmSnapshot, savingMirror } from "../support/warm-mirror.ts";
import {
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registryOf,
} from "../support/world.ts";

/** A value with one good App and one refused (an upper-case name). */
const VALUE = JSON.stringify(
  registryDoc([
    { name: "shop", hostnames: ["Shop.Example.com"], upstream: "http://10.0.0.12:8080" },
    { name: "Bad", hostnames: ["bad.example.com"], secret: "bad-credentials" },
  ]),
);
const BAD_REFUSAL = {
  index: 1,
  name: "Bad",
  reason: "name: must be a DNS-1123 label (lower-case letters, digits, '-')",
};

/** A check that stands out: it serves a `saved` App the value does not declare. */
const savedCheck = (hash: string, under: Partial<CheckedRegistry["under"]> = {}) => ({
  under: {
    rules: REGISTRY_RULES,
    defaultNamespace: REGISTRY_NS,
    allowLocalUpstreams: false,
    maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
    ...under,
  },
  contentHash: hash,
  registry: registryOf([{ name: "saved", hostnames: ["saved.example.com"] }], REGISTRY_NS),
  refused: [{ index: 7, name: "gone", reason: "name: taken by apps[0]" }],
});

const inputs = (checked?: CheckedRegistry): MirrorInputs => ({
  registry: { present: true, resourceVersion: "10", value: VALUE },
  secrets: [],
  watches: { registry: "10", secrets: [{ namespace: null, resourceVersion: "10" }] },
  ...(checked === undefined ? {} : { checked }),
});

/** The first Snapshot of a warm start from `saved`: the Apps it serves and what it refused. */
async function warmStart(saved: MirrorInputs) {
  const snapshot = await firstWarmSnapshot(saved);
  const { refusedApps, contentHash } = snapshot.registry;
  return { apps: listApps(snapshot).map((a) => a.name), refusedApps, contentHash };
}

/** The check a mirror synced from the API server saves with VALUE. */
async function capturedCheck(): Promise<CheckedRegistry | undefined> {
  const registry = new FakeListWatch();
  registry.replyList(
    ok(page("5", [secret(REGISTRY_NAME, "4", { [REGISTRY_KEY]: VALUE }, REGISTRY_NS)])),
  );
  const secrets = new FakeListWatch();
  secrets.replyList(ok(page("6", [])));
  const { mirror, published } = savingMirror(registry, secrets);
  mirror.start();
  try {
    return await waitUntil(() => published.at(-1)?.checked);
  } finally {
    await mirror.stop();
  }
}

describe("a warm start from a state with the Registry's check", () => {
  it("saves the check of the value it serves: its Apps in normal form, its refusals, its rules", async () => {
    const checked = await capturedCheck();
    expect(checked).toEqual({
      under: savedCheck("").under,
      contentHash: expect.stringMatching(/^[0-9a-f]{16}$/),
      registry: registryOf(
        [{ name: "shop", hostnames: ["shop.example.com"], upstream: "http://10.0.0.12:8080" }],
        REGISTRY_NS,
      ),
      refused: [BAD_REFUSAL],
    });
  });

  it("adopts a check made under its rules from this value, unchecked", async () => {
    const hash = (await capturedCheck())!.contentHash;
    expect(await warmStart(inputs(savedCheck(hash)))).toEqual({
      apps: ["saved"],
      refusedApps: [{ index: 7, name: "gone", reason: "name: taken by apps[0]", kept: false }],
      contentHash: hash,
    });
  });

  it("checks the value again when its check was made under other rules or options, or from another value, or is missing", async () => {
    const hash = (await capturedCheck())!.contentHash;
    const checkedAgain = {
      apps: ["shop"],
      refusedApps: [{ ...BAD_REFUSAL, kept: false }],
      contentHash: hash,
    };
    const starts = {
      "a state written before ADR 77": inputs(),
      "older rules": inputs(savedCheck(hash, { rules: REGISTRY_RULES - 1 })),
      "newer rules": inputs(savedCheck(hash, { rules: REGISTRY_RULES + 1 })),
      "local upstreams allowed": inputs(savedCheck(hash, { allowLocalUpstreams: true })),
      "another default namespace": inputs(savedCheck(hash, { defaultNamespace: "elsewhere" })),
      "another gzip cap": inputs(savedCheck(hash, { maxDecompressedBytes: 1024 })),
      "another value": inputs(savedCheck("0000000000000000")),
    };
    const seen: Record<string, unknown> = {};
    for (const [why, saved] of Object.entries(starts)) seen[why] = await warmStart(saved);
    expect(seen).toEqual(Object.fromEntries(Object.keys(starts).map((k) => [k, checkedAgain])));
  });
});
