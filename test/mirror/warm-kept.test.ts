// A warm start while the Registry's value is refused serves what was in service beside it (ADR
// 91): the last good Registry beside a value refused whole, the last good version of each refused
// App beside a value that refuses some. A mirror saves that Registry beside the value, and a start
// adopts it only when it was saved beside this very resourceVersion under this start's rules.

import { describe, expect, it } from "vitest";
import type { KeptRegistry, MirrorInputs } from "../../src/mirror/inputs.ts";
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from "../../src/registry/parse.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import { ok } from "../../src/result.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { firstWarmSnapshot, savingMirror } from "../support/warm-mirror.ts";
import {
  type AppInput,
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registryOf,
} from "../support/world.ts";

const SHOP: AppInput = {
  name: "shop",
  hostnames: ["shop.example.com"],
  upstream: "http://10.0.0.12:8080",
};
const BLOG: AppInput = {
  name: "blog",
  hostnames: ["blog.example.com"],
  upstream: "http://10.0.0.13:8080",
};
const GOOD = JSON.stringify(registryDoc([SHOP, BLOG]));
/** Shop moved; blog's new upstream is a local address, refused (ADR 48): its last good one stays. */
const PARTLY = JSON.stringify(
  registryDoc([
    { ...SHOP, upstream: "http://10.0.0.14:8080" },
    { ...BLOG, upstream: "http://127.0.0.1:9000" },
  ]),
);
const BROKEN = "{not json";

const UNDER = {
  rules: REGISTRY_RULES,
  defaultNamespace: REGISTRY_NS,
  allowLocalUpstreams: false,
  maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
};

const registrySecret = (resourceVersion: string, value: string) =>
  secret(REGISTRY_NAME, resourceVersion, { [REGISTRY_KEY]: value }, REGISTRY_NS);

/** The inputs a mirror synced on GOOD saves once the watch delivered `value` after it. */
async function savedAfter(value: string): Promise<MirrorInputs> {
  const registry = new FakeListWatch();
  registry.replyList(ok(page("5", [registrySecret("4", GOOD)])));
  const secrets = new FakeListWatch();
  secrets.replyList(ok(page("6", [])));
  const { mirror, published } = savingMirror(registry, secrets);
  const saved = () => published.at(-1) ?? undefined;
  mirror.start();
  try {
    await waitUntil(() => (saved()?.registry.present ? true : undefined));
    registry.current.modify(registrySecret("7", value));
    return await waitUntil(() => {
      const s = saved();
      return s?.registry.present && s.registry.resourceVersion === "7" ? s : undefined;
    });
  } finally {
    await mirror.stop();
  }
}

/** The first Snapshot of a warm start from `saved`: each App's upstream, and the refusals. */
async function warmStart(saved: MirrorInputs) {
  const snapshot = await firstWarmSnapshot(saved);
  const { error, refusedApps } = snapshot.registry;
  const apps = listApps(snapshot).map((a) => `${a.name} ${a.upstream}`);
  return { apps, failed: error !== null, refused: refusedApps.map((r) => [r.name, r.kept]) };
}

const inService = (apps: readonly AppInput[]): KeptRegistry => ({
  under: UNDER,
  beside: "7",
  registry: registryOf(apps, REGISTRY_NS),
});

describe("a warm start beside a refused Registry value", () => {
  it("saves the Registry in service beside a value refused whole or in part, and none beside a good one", async () => {
    const [broken, partly, good] = [
      await savedAfter(BROKEN),
      await savedAfter(PARTLY),
      await savedAfter(JSON.stringify(registryDoc([SHOP]))),
    ];
    expect({
      broken: [broken.kept, broken.checked],
      partly: partly.kept,
      good: good.kept,
    }).toEqual({
      broken: [inService([SHOP, BLOG]), undefined],
      partly: inService([{ ...SHOP, upstream: "http://10.0.0.14:8080" }, BLOG]),
      good: undefined,
    });
  });

  it("serves, from what it saved, what was in service: the last good Registry, or the last good version of each refused App", async () => {
    expect({
      broken: await warmStart(await savedAfter(BROKEN)),
      partly: await warmStart(await savedAfter(PARTLY)),
    }).toEqual({
      broken: {
        apps: ["blog http://10.0.0.13:8080", "shop http://10.0.0.12:8080"],
        failed: true,
        refused: [],
      },
      partly: {
        apps: ["blog http://10.0.0.13:8080", "shop http://10.0.0.14:8080"],
        failed: false,
        refused: [["blog", true]],
      },
    });
  });

  it("serves the value alone when the kept Registry was saved beside another version or under other rules", async () => {
    const saved = await savedAfter(BROKEN);
    const kept = saved.kept!;
    const starts = {
      "beside another version": { ...saved, kept: { ...kept, beside: "6" } },
      "under other rules": {
        ...saved,
        kept: { ...kept, under: { ...UNDER, rules: REGISTRY_RULES + 1 } },
      },
      "local upstreams allowed": {
        ...saved,
        kept: { ...kept, under: { ...UNDER, allowLocalUpstreams: true } },
      },
      "a state written before ADR 91": { ...saved, kept: undefined },
    };
    const seen: Record<string, unknown> = {};
    for (const [why, inputs] of Object.entries(starts)) seen[why] = await warmStart(inputs);
    const alone = { apps: [], failed: true, refused: [] };
    expect(seen).toEqual(Object.fromEntries(Object.keys(starts).map((k) => [k, alone])));
  });
});
