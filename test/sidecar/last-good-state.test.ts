// The state file across container restarts in one pod (README, "The state file"; ADR 50): the
// keeper's writes, the start that reads them back, and the high-water mark that tells a state
// file put back over a newer one. Time is the tests': a fake clock and a wall clock they set.

import { copyFileSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseServeConfig } from "../../src/cli/config.ts";
import type { CheckedRegistry, MirrorInputs } from "../../src/mirror/inputs.ts";
import type { Reflected } from "../../src/mirror/sink.ts";
import { rolledBackObserver } from "../../src/ops/rolled-back-log.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import {
  type OpenedState,
  openLastGoodState,
  type StateLoad,
} from "../../src/sidecar/last-good-state.ts";
import { startStateKeeper } from "../../src/sidecar/state-keeper.ts";
import { markPathOf } from "../../src/state/mark.ts";
import { FORMAT_VERSION } from "../../src/state/seal.ts";
import { FORMAT_1_FILE, FORMAT_1_KEY, FORMAT_2_FILE, scratchPerTest } from "../state/fixtures.ts";
import { FakeClock, settle } from "../support/fake-clock.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { serveFlags } from "../support/serve-flags.ts";
import { REGISTRY_NS, registryStatus, snapshotOf } from "../support/world.ts";

const T0 = 1_750_000_000_000;
const MINUTE = 60_000;
const SERIES = "5e1e5e1e5e1e5e1e";
const scratch = scratchPerTest();

/** A pod's state volume: its key, and each start and keeper of its containers. */
function pod() {
  const { dir } = scratch;
  const path = join(dir, "state");
  writeFileSync(join(dir, "key"), Buffer.from("2f".repeat(16) + "a1".repeat(16), "hex"));
  const parsed = parseServeConfig(
    serveFlags("/nonexistent/kubeconfig", REGISTRY_NS, [
      "--allow-cluster-wide-secrets",
      "true",
      "--state-file",
      path,
      "--state-key-file",
      join(dir, "key"),
      "--state-max-age",
      "3600",
    ]),
    {},
  );
  if (!parsed.ok) throw new Error(parsed.error);
  const config = parsed.value;
  const memory = memoryLogger("info");
  const loads: StateLoad[] = [];
  /** The log lines since the last call, without the fields that vary. */
  const lines = (() => {
    let seen = 0;
    return () => {
      const all = memory.lines();
      const fresh = all.slice(seen).map((l) => {
        const {
          time: _t,
          pid: _p,
          hostname: _h,
          ...rest
        } = JSON.parse(l) as Record<string, unknown>;
        return rest;
      });
      seen = all.length;
      return fresh;
    };
  })();
  const open = async (now: number): Promise<OpenedState> => {
    const opened = await openLastGoodState(
      config,
      memory.logger,
      now,
      (l) => loads.push(l),
      () => SERIES,
    );
    if (opened === null) throw new Error("the state file is off");
    return opened;
  };
  /** One container's keeper: writes `inputs` once, at `wallNow`, as it does on shutdown. */
  const writeOnce = async (opened: OpenedState, inputs: MirrorInputs, wallNow: number) => {
    const failures: string[] = [];
    const keeper = startStateKeeper({
      path,
      opened,
      clock: new FakeClock(),
      wallClock: () => wallNow,
      reports: { written: () => {}, failed: (m) => failures.push(m) },
    });
    keeper.heard?.(reflecting(inputs));
    await keeper.close();
    expect(failures).toEqual([]);
  };
  /** One container's keeper on a fake clock, and a promise of its next write. */
  const keep = (opened: OpenedState) => {
    const clock = new FakeClock();
    const landed: (() => void)[] = [];
    const keeper = startStateKeeper({
      path,
      opened,
      clock,
      wallClock: () => T0 + clock.now(),
      reports: { written: () => landed.shift()?.(), failed: (m) => expect.fail(m) },
    });
    const nextWrite = () => new Promise<void>((resolve) => landed.push(resolve));
    return { keeper, clock, nextWrite };
  };
  return { path, config, lines, loads, open, writeOnce, keep, logger: memory.logger };
}

/** The inputs of a mirror whose Registry Secret is at `registryRv`. */
const inputs = (registryRv: string): MirrorInputs => ({
  registry: { present: true, resourceVersion: registryRv, value: `{"rv":${registryRv}}` },
  secrets: [{ namespace: "tenant-a", name: "shop", resourceVersion: "3", data: { token: "t" } }],
  watches: {
    registry: registryRv,
    secrets: [{ namespace: null, resourceVersion: registryRv }],
  },
});

/** A check of inputs(...)'s Registry value, as a tracker keeps it. */
const CHECKED: CheckedRegistry = {
  under: {
    rules: REGISTRY_RULES,
    defaultNamespace: REGISTRY_NS,
    allowLocalUpstreams: false,
    maxDecompressedBytes: 1024,
  },
  contentHash: "0123456789abcdef",
  registry: { apps: [] },
  refused: [],
};

const iso = (ms: number) => new Date(ms).toISOString();

/** What a published Snapshot built from `inputs` reflects. */
const reflecting = (inputs: MirrorInputs): Reflected => ({
  positions: inputs.watches,
  inputs: () => inputs,
  current: () => inputs,
});

/** The one line a start logs when it may not serve the state file it found. */
const coldStart = (reason: string, err: string) => ({
  level: 40,
  msg: "state file not used: starting cold",
  reason,
  err,
});

describe("the state file's generation across the containers of one pod", () => {
  it("grows with every write, and a restarted container's writes go on from it", async () => {
    const p = pod();
    let opened = await p.open(T0);
    expect(opened.generation).toEqual({ series: SERIES, writes: 0, heardAt: null });
    const seen: unknown[] = [];
    for (const [i, rv] of ["10", "11", "12"].entries()) {
      await p.writeOnce(opened, inputs(rv), T0 + i * MINUTE);
      opened = await p.open(T0 + i * MINUTE + 1_000);
      seen.push(opened.generation);
    }
    expect(seen).toEqual([
      { series: SERIES, writes: 1, heardAt: T0 },
      { series: SERIES, writes: 2, heardAt: T0 + MINUTE },
      { series: SERIES, writes: 3, heardAt: T0 + 2 * MINUTE },
    ]);
    expect(p.loads).toEqual(["missing", "loaded", "loaded", "loaded"]);
  });

  it("grows within one container too: each write the keeper makes counts one more", async () => {
    const p = pod();
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0));
    const writes: number[] = [];
    for (const [i, rv] of ["21", "22"].entries()) {
      keeper.publish(snapshotOf([], {}, i + 1), reflecting(inputs(rv)));
      const written = nextWrite();
      await clock.advance(5_000);
      await written;
      writes.push((await p.open(T0 + clock.now())).generation.writes);
    }
    await keeper.close();
    writes.push((await p.open(T0 + clock.now())).generation.writes);
    expect(writes).toEqual([1, 2, 3]);
  });

  it("reads the inputs when a write starts, not at every Snapshot, and writes none that are not whole then", async () => {
    const p = pod();
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0));
    let reads = 0;
    let whole = true;
    const counted = (i: MirrorInputs): Reflected => ({
      positions: i.watches,
      inputs: () => {
        reads++;
        return i;
      },
      current: () => {
        reads++;
        return whole ? i : null;
      },
    });
    const held = async () => (await p.open(T0 + clock.now())).warm?.inputs.watches.registry;
    let written = nextWrite();
    keeper.publish(snapshotOf([], {}, 1), counted(inputs("31")));
    await written;
    const first = { reads, held: await held() };
    for (let i = 2; i <= 11; i++)
      keeper.publish(snapshotOf([], {}, i), counted(inputs(String(30 + i))));
    const between = reads;
    written = nextWrite();
    await clock.advance(5_000);
    await written;
    const second = { reads, held: await held() };
    whole = false;
    keeper.publish(snapshotOf([], {}, 12), counted(inputs("42")));
    await clock.advance(5_000);
    await settle();
    const notWhole = { reads, held: await held() };
    await keeper.close();
    expect({ first, between, second, notWhole }).toEqual({
      first: { reads: 1, held: "31" },
      between: 1,
      second: { reads: 2, held: "41" },
      notWhole: { reads: 3, held: "41" },
    });
  });

  it("rewrites a quiet replica's state, with the watches' newer positions, on contact 5 minutes after its last write", async () => {
    const p = pod();
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0));
    const saved = inputs("21");
    const moved = (registry: string) =>
      reflecting({ ...saved, watches: { ...saved.watches, registry } });
    const onDisk = async () => {
      const { generation, warm } = await p.open(T0 + clock.now());
      return [generation.writes, warm?.inputs.watches.registry];
    };
    let written = nextWrite();
    keeper.publish(snapshotOf([], {}, 1), reflecting(saved));
    await written;
    await clock.advance(4 * MINUTE);
    keeper.heard?.(moved("30"));
    const early = await onDisk();
    await clock.advance(MINUTE);
    written = nextWrite();
    keeper.heard?.(moved("31"));
    await written;
    expect([early, await onDisk()]).toEqual([
      [1, "21"],
      [2, "31"],
    ]);
    await keeper.close();
  });
});

describe("a warm start's keeper", () => {
  it("writes nothing when the watches confirm the inputs it loaded, and writes the first change", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    const opened = await p.open(T0 + MINUTE);
    const clock = new FakeClock();
    const writes: number[] = [];
    const keeper = startStateKeeper({
      path: p.path,
      opened,
      clock,
      wallClock: () => T0 + MINUTE + clock.now(),
      reports: { written: () => writes.push(clock.now()), failed: (m) => expect.fail(m) },
    });
    // The file's Snapshot (its inputs not confirmed yet), then the same inputs, confirmed.
    keeper.publish(snapshotOf([], {}, 1), null);
    keeper.publish(snapshotOf([], {}, 2), reflecting(inputs("10")));
    keeper.heard?.(reflecting(inputs("10")));
    await clock.advance(10_000);
    const quiet = [[...writes], (await p.open(T0 + MINUTE + clock.now())).generation.writes];
    keeper.publish(snapshotOf([], {}, 3), reflecting(inputs("11")));
    await keeper.close();
    const after = await p.open(T0 + MINUTE + clock.now());
    // The change, then the shutdown's write.
    expect([quiet, writes.length, after.generation.writes, after.warm?.inputs]).toEqual([
      [[], 1],
      2,
      3,
      { ...inputs("11"), config: opened.config },
    ]);
  });
});

describe("a warm start's keeper, when its file lacks the Registry's check (ADR 77)", () => {
  it("writes the confirmed inputs once more, with the check, and then nothing", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0 + MINUTE));
    const confirmed = { ...inputs("10"), checked: CHECKED };
    keeper.publish(snapshotOf([], {}, 1), null);
    const written = nextWrite();
    keeper.publish(snapshotOf([], {}, 2), reflecting(confirmed));
    await written;
    let more = 0;
    void nextWrite().then(() => more++);
    await clock.advance(10_000);
    keeper.heard?.(reflecting(confirmed));
    await clock.advance(10_000);
    const after = await p.open(T0 + MINUTE + clock.now());
    expect([more, after.warm?.inputs.checked]).toEqual([0, CHECKED]);
    await keeper.close();
  });
});

describe("a start that finds an older state file than the newest its pod wrote", () => {
  it("serves the replayed file (same key), warns once naming both generations, and counts rolled-back", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    copyFileSync(p.path, join(scratch.dir, "backup"));
    await p.writeOnce(await p.open(T0 + MINUTE), inputs("11"), T0 + 2 * MINUTE);
    // A careless restore: the backup put back over the newest file, the mark left as it is.
    copyFileSync(join(scratch.dir, "backup"), p.path);
    p.lines();
    const opened = await p.open(T0 + 3 * MINUTE);
    expect(p.lines()).toEqual([
      {
        level: 40,
        msg: "state file is not the newest this pod wrote: serving it until the watches confirm it",
        secrets: 1,
        savedAt: iso(T0),
        writes: 1,
        reason: "older",
        registry: "10",
        newestWrites: 2,
        newestSavedAt: iso(T0 + 2 * MINUTE),
        newestRegistry: "11",
      },
    ]);
    expect(p.loads).toEqual(["missing", "loaded", "rolled-back"]);
    expect(opened.warm?.inputs.registry).toEqual(inputs("10").registry);
    expect([opened.generation, opened.rolledBack]).toEqual([
      { series: SERIES, writes: 2, heardAt: T0 },
      {
        reason: "older",
        registry: "10",
        newest: {
          series: SERIES,
          writes: 2,
          heardAt: T0 + 2 * MINUTE,
          savedAt: T0 + 2 * MINUTE,
          registry: "11",
        },
      },
    ]);
    // Its next write is past the mark: the start after it finds the newest again.
    await p.writeOnce(opened, inputs("12"), T0 + 4 * MINUTE);
    p.lines();
    expect((await p.open(T0 + 5 * MINUTE)).generation.writes).toBe(3);
    expect(p.loads.at(-1)).toBe("loaded");
  });

  it("tells once, when the API server's inputs replace it, which Registry it served", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    copyFileSync(p.path, join(scratch.dir, "backup"));
    await p.writeOnce(await p.open(T0 + MINUTE), inputs("11"), T0 + MINUTE);
    copyFileSync(join(scratch.dir, "backup"), p.path);
    const opened = await p.open(T0 + 2 * MINUTE);
    p.lines();
    const clock = new FakeClock();
    const observer = rolledBackObserver(opened, p.logger, clock);
    const fromFile = { ...snapshotOf([]), source: { kind: "state-file" as const, savedAt: T0 } };
    const fromApi = snapshotOf([], {}, 2, registryStatus("12"));
    observer.published?.({ snapshot: fromFile, kind: "whole", buildMs: 0, eventToSwapMs: null });
    await clock.advance(4_000);
    for (const snapshot of [fromApi, fromApi])
      observer.published?.({ snapshot, kind: "whole", buildMs: 0, eventToSwapMs: null });
    expect(p.lines()).toEqual([
      {
        level: 40,
        msg: "rolled-back state file replaced by the API server's inputs",
        reason: "older",
        servedMs: 4_000,
        registry: "10",
        newestRegistry: "11",
        apiServerRegistry: "12",
        servedOlderRegistry: true,
      },
    ]);
  });

  it("warns of a mark it cannot read, and serves the file it cannot compare", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    writeFileSync(markPathOf(p.path), readFileSync(p.path));
    p.lines();
    const opened = await p.open(T0 + MINUTE);
    expect(p.lines()).toEqual([
      {
        level: 40,
        msg: "state file's high-water mark not used: a replayed state file cannot be told",
        reason: "not-a-state-file",
        err: `high-water mark ${markPathOf(p.path)} does not start with a high-water mark's magic bytes`,
      },
      {
        level: 30,
        msg: "state file loaded: serving its Snapshot until the watches confirm it",
        secrets: 1,
        savedAt: iso(T0),
        writes: 1,
      },
    ]);
    expect([opened.warm === undefined, opened.rolledBack]).toEqual([false, undefined]);
  });
});

describe("a start from a state file with a journal (ADR 79)", () => {
  // Enough App Secrets that a record of a Registry change is a small part of the base.
  const secrets = Array.from({ length: 50 }, (_, i) => ({
    namespace: "tenant-a",
    name: `app-${String(i).padStart(3, "0")}`,
    resourceVersion: "3",
    data: { token: "t".repeat(200) },
  }));
  const withApps = (rv: string): MirrorInputs => ({ ...inputs(rv), secrets });
  /**
   * One container's keeper writing inputs 10 (the base), 11 and 12 (two records); the file's
   * size and a copy of the mark after each write.
   */
  const threeWrites = async (p: ReturnType<typeof pod>) => {
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0));
    const after: { size: number; mark: Buffer }[] = [];
    for (const [i, rv] of ["10", "11", "12"].entries()) {
      const written = nextWrite();
      keeper.publish(snapshotOf([], {}, i + 1), reflecting(withApps(rv)));
      await clock.advance(5_000);
      await written;
      after.push({ size: statSync(p.path).size, mark: readFileSync(markPathOf(p.path)) });
    }
    await keeper.close();
    p.lines();
    return after;
  };
  /** The file cut to `size` bytes, and the mark `mark` put back beside it. */
  const cut = (p: ReturnType<typeof pod>, size: number, mark?: Buffer) => {
    truncateSync(p.path, size);
    if (mark !== undefined) writeFileSync(markPathOf(p.path), mark);
  };
  const served = async (p: ReturnType<typeof pod>) => {
    const opened = await p.open(T0 + MINUTE);
    return {
      registry: opened.warm?.inputs.registry,
      rolledBack: opened.rolledBack?.reason,
      load: p.loads.at(-1),
      lines: p.lines().map((l) => [l.msg, l.records, l.reason]),
    };
  };
  const loadedLine = "state file loaded: serving its Snapshot until the watches confirm it";
  const olderLine =
    "state file is not the newest this pod wrote: serving it until the watches confirm it";

  it("serves base and journal whole as the newest", async () => {
    const p = pod();
    await threeWrites(p);
    expect(await served(p)).toEqual({
      registry: inputs("12").registry,
      rolledBack: undefined,
      load: "loaded",
      lines: [[loadedLine, 3, undefined]],
    });
  });

  it("counts a journal cut short at a record, or its base put back alone, as rolled back", async () => {
    const p = pod();
    const [base, first] = await threeWrites(p);
    const file = readFileSync(p.path);
    cut(p, first!.size);
    const short = await served(p);
    writeFileSync(p.path, file);
    cut(p, base!.size);
    expect([short, await served(p)]).toEqual([
      {
        registry: inputs("11").registry,
        rolledBack: "older",
        load: "rolled-back",
        lines: [[olderLine, 1, "older"]],
      },
      {
        registry: inputs("10").registry,
        rolledBack: "older",
        load: "rolled-back",
        lines: [[olderLine, undefined, "older"]],
      },
    ]);
  });

  it("goes on appending to the file it loaded, after a restart: the base stays, one record more", async () => {
    const p = pod();
    const [base] = await threeWrites(p);
    const before = readFileSync(p.path);
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0 + MINUTE));
    const written = nextWrite();
    keeper.publish(snapshotOf([], {}, 1), reflecting(withApps("13")));
    await clock.advance(5_000);
    await written;
    const after = readFileSync(p.path);
    p.lines();
    expect({
      baseKept: after.subarray(0, base!.size).equals(before.subarray(0, base!.size)),
      prefixKept: after.subarray(0, before.length).equals(before),
      // The loaded Secrets, captured as other objects, are no change: the record is the Registry's.
      recordBytes: after.length - before.length < 1_024,
      served: await served(p),
    }).toEqual({
      baseKept: true,
      prefixKept: true,
      recordBytes: true,
      served: {
        registry: inputs("13").registry,
        rolledBack: undefined,
        load: "loaded",
        lines: [[loadedLine, 4, undefined]],
      },
    });
    await keeper.close();
  });

  it("writes a new base after a start that found a torn record, never a record after it", async () => {
    const p = pod();
    const [, first, second] = await threeWrites(p);
    cut(p, second!.size - 5, first!.mark);
    const { keeper, clock, nextWrite } = p.keep(await p.open(T0 + MINUTE));
    const written = nextWrite();
    keeper.publish(snapshotOf([], {}, 1), reflecting(withApps("13")));
    await clock.advance(5_000);
    await written;
    p.lines();
    expect(await served(p)).toEqual({
      registry: inputs("13").registry,
      rolledBack: undefined,
      load: "loaded",
      lines: [[loadedLine, undefined, undefined]],
    });
    await keeper.close();
  });

  it("ignores a torn last record, whose mark was never written, and serves the state before it", async () => {
    const p = pod();
    const [, first, second] = await threeWrites(p);
    cut(p, second!.size - 5, first!.mark);
    expect(await served(p)).toEqual({
      registry: inputs("11").registry,
      rolledBack: undefined,
      load: "loaded",
      lines: [
        [
          "state file's last journal record is cut short (a write the container did not finish): ignored",
          1,
          undefined,
        ],
        [loadedLine, 1, undefined],
      ],
    });
  });
});

describe("a start that finds a state file it may not serve", () => {
  it("refuses a file saved more than 5 minutes ahead of its clock, and goes on from the mark", async () => {
    const p = pod();
    await p.writeOnce(await p.open(T0), inputs("10"), T0 + 5 * MINUTE + 1);
    p.lines();
    const opened = await p.open(T0);
    expect(p.lines()).toEqual([
      coldStart(
        "saved-in-future",
        `state file ${p.path} saved 300 s after now by this clock, more than the 300 s of clock skew allowed`,
      ),
    ]);
    expect([opened.warm, opened.generation]).toEqual([
      undefined,
      { series: SERIES, writes: 1, heardAt: null },
    ]);
    await p.open(T0 + 1);
    expect(p.loads).toEqual(["missing", "saved-in-future", "loaded"]);
  });

  it("starts cold from a file of the format before generations, with one line", async () => {
    const p = pod();
    writeFileSync(join(scratch.dir, "key"), Buffer.from(FORMAT_1_KEY, "hex"));
    writeFileSync(p.path, FORMAT_1_FILE);
    const opened = await p.open(T0);
    expect(p.lines()).toEqual([
      coldStart(
        "old-version",
        `state file ${p.path} format version 1, older than ${FORMAT_VERSION}`,
      ),
    ]);
    expect([opened.warm, p.loads]).toEqual([undefined, ["old-version"]]);
  });

  it("starts cold from a file of format 2 (App Secrets as objects), keeps the mark, and writes the current format", async () => {
    const p = pod();
    writeFileSync(join(scratch.dir, "key"), Buffer.from(FORMAT_1_KEY, "hex"));
    await p.writeOnce(await p.open(T0), inputs("10"), T0);
    writeFileSync(p.path, FORMAT_2_FILE);
    p.lines();
    const opened = await p.open(T0);
    expect(p.lines()).toEqual([
      coldStart(
        "old-version",
        `state file ${p.path} format version 2, older than ${FORMAT_VERSION}`,
      ),
    ]);
    expect([opened.warm, opened.generation]).toEqual([
      undefined,
      { series: SERIES, writes: 1, heardAt: null },
    ]);
    await p.writeOnce(opened, inputs("11"), T0 + MINUTE);
    const next = await p.open(T0 + MINUTE);
    expect([next.generation.writes, next.warm?.inputs.registry, p.loads]).toEqual([
      2,
      inputs("11").registry,
      ["missing", "old-version", "loaded"],
    ]);
  });
});
