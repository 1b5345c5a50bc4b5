// The cost of one App's change with the journal (ADR 79) at N referenced Secrets of 1 KiB: the
// writer's first write (a base, as every write was before), then one-App rotations, each an
// appended record (diff, encode, seal, append, fsync, mark), then the warm start's read of base
// and journal. Bytes, wall and CPU ms (all threads), and the longest the event loop waited for a
// turn. Not a test: `node test/state/measure-journal.ts [secrets] [rotations]`; it writes under
// $STATE_DIR (default: the system's temp directory; /dev/shm is a tmpfs, as an emptyDir of medium
// Memory).

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/clock.ts";
import type { AppSecret } from "../../src/mirror/inputs.ts";
import { ListedIndex } from "../../src/mirror/listed-index.ts";
import { changesBetween } from "../../src/state/changes.ts";
import { StateKey } from "../../src/state/key.ts";
import { type OpenedStateFile, readStateWithJournal } from "../../src/state/read-state.ts";
import { type State, stateConfig } from "../../src/state/state.ts";
import { StateWriter, type StateWritten } from "../../src/state/writer.ts";

const SECRETS = Number(process.argv[2] ?? 100_000);
const ROTATIONS = Number(process.argv[3] ?? 20);

const config = stateConfig({
  registryNamespace: "mirror",
  registryName: "registry",
  registryKey: "registry.json",
  secretNamespaces: [],
  secretSelector: undefined,
});
const secret = (i: number, version: number): AppSecret => ({
  namespace: `tenant-${i % 50}`,
  name: `app-${i}-credentials`,
  resourceVersion: String(version),
  data: { token: randomBytes(1024).toString("latin1") },
});
// Held as the store holds them, so that each capture is linked to the one before (listChanges).
const secrets = new ListedIndex<AppSecret>();
for (let i = 0; i < SECRETS; i++)
  secrets.set(`tenant-${i % 50}`, `app-${i}-credentials`, secret(i, 1000 + i));
let writes = 0;
const stateNow = (): State => ({
  savedAt: Date.now(),
  generation: { series: "0123456789abcdef", writes: ++writes, heardAt: Date.now() },
  config,
  registry: { present: true, resourceVersion: "100", value: registryValue },
  secrets: secrets.list(),
  watches: { registry: "100", secrets: [{ namespace: null, resourceVersion: String(writes) }] },
});
const registryValue = randomBytes(SECRETS * 120).toString("latin1");
const key = new StateKey(randomBytes(32));
const dir = mkdtempSync(join(process.env.STATE_DIR ?? tmpdir(), "state-journal-"));
const path = join(dir, "state");

const written: StateWritten[] = [];
const writer = new StateWriter({
  path,
  key,
  clock: systemClock,
  intervalMs: 0,
  onError: (e) => {
    throw new Error(e.message);
  },
  onWritten: (w) => written.push(w),
});

/** Wall ms, CPU ms and the longest wait for a turn of the event loop while `fn` ran. */
async function measure(fn: () => Promise<unknown>) {
  let [last, longest, running] = [performance.now(), 0, true];
  const tick = (): void => {
    if (!running) return;
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    setImmediate(tick);
  };
  setImmediate(tick);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  running = false;
  return {
    wall,
    cpu: (used.user + used.system) / 1000,
    turn: Math.max(longest, performance.now() - last),
  };
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]): number => Math.max(...xs);
const f = (ms: number): string => ms.toFixed(1);

const write = async (state: State) => {
  writer.schedule(state);
  await writer.flush();
};

try {
  const base = await measure(() => write(stateNow()));
  console.log(
    `base: ${written[0]!.bytes} bytes, wall ${f(base.wall)} ms, cpu ${f(base.cpu)} ms, longest turn ${f(base.turn)} ms`,
  );
  const rounds: { wall: number; cpu: number; turn: number; diff: number; bytes: number }[] = [];
  for (let r = 0; r < ROTATIONS; r++) {
    const before = stateNow();
    writes -= 1;
    const i = (r * 7919) % SECRETS;
    secrets.set(`tenant-${i % 50}`, `app-${i}-credentials`, secret(i, 10_000_000 + r));
    const after = stateNow();
    const diff = await measure(() => changesBetween(before, after));
    const m = await measure(() => write(after));
    rounds.push({ ...m, diff: diff.cpu, bytes: written.at(-1)!.bytes });
    if (written.at(-1)!.record === 0) console.log(`rotation ${r} compacted`);
  }
  const col = (k: "wall" | "cpu" | "turn" | "diff" | "bytes") => rounds.map((x) => x[k]);
  console.log(
    `one-App append (${ROTATIONS}): bytes median ${median(col("bytes"))}, wall median ${f(median(col("wall")))} max ${f(max(col("wall")))} ms, cpu median ${f(median(col("cpu")))} max ${f(max(col("cpu")))} ms, longest turn max ${f(max(col("turn")))} ms; diff alone cpu median ${f(median(col("diff")))} ms`,
  );
  const size = statSync(path).size;
  let opened: OpenedStateFile | null = null;
  const read = await measure(async () => {
    const r = await readStateWithJournal({
      path,
      key,
      maxAgeMs: 3_600_000,
      now: Date.now(),
      config,
    });
    if (!r.ok || r.value.journal.records !== ROTATIONS)
      throw new Error("the journal did not read back");
    opened = r.value;
  });
  console.log(
    `read base + ${ROTATIONS} records (${size} bytes): wall ${f(read.wall)} ms, cpu ${f(read.cpu)} ms`,
  );
  await writer.close();
  // A restart: a store seeded from the file holds objects of its own, sharing the file's values;
  // its writer goes on appending, its first diff by content.
  const resume = opened as OpenedStateFile | null;
  if (resume === null) throw new Error("nothing read");
  const seeded = [...resume.state.secrets].map((s) => ({ ...s, data: { ...s.data } }));
  const warm = new StateWriter({
    path,
    key,
    clock: systemClock,
    intervalMs: 0,
    resume,
    onError: (e) => {
      throw new Error(e.message);
    },
    onWritten: (w) => written.push(w),
  });
  seeded[0] = secret(0, 20_000_000);
  const state = { ...resume.state, secrets: seeded, savedAt: Date.now() };
  const first = await measure(async () => {
    warm.schedule(state);
    await warm.flush();
  });
  const w = written.at(-1)!;
  console.log(
    `after a warm start, the first one-App write: record ${w.record}, ${w.bytes} bytes, wall ${f(first.wall)} ms, cpu ${f(first.cpu)} ms, longest turn ${f(first.turn)} ms`,
  );
  await warm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
