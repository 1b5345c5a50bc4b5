// The cost of the state file at 10k referenced Secrets of 1 KiB: one write (encode, seal, atomic
// write; each step apart, then whole as the writer streams it, with the longest the event loop
// waited for a turn meanwhile) and one read (read, unseal, decode, check), each step timed. Not a test: run it with
// `node test/state/measure.ts [secrets] [rounds]`; it writes under $STATE_DIR (default: the
// system's temp directory; /dev/shm is a tmpfs, as an emptyDir of medium Memory).

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeState, encodeState } from "../../src/state/document.ts";
import { readFileCapped, writeFileAtomic } from "../../src/state/file.ts";
import { StateKey } from "../../src/state/key.ts";
import { readStateFile } from "../../src/state/read-state.ts";
import { seal, unseal } from "../../src/state/seal.ts";
import { type State, stateConfig } from "../../src/state/state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";

const SECRETS = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 5);

const config = stateConfig({
  registryNamespace: "mirror",
  registryName: "registry",
  registryKey: "registry.json",
  secretNamespaces: [],
  secretSelector: undefined,
});
const state: State = {
  savedAt: Date.now(),
  generation: { series: "0123456789abcdef", writes: 1, heardAt: Date.now() },
  config,
  registry: {
    present: true,
    resourceVersion: "100",
    value: randomBytes(SECRETS * 120).toString("latin1"),
  },
  secrets: Array.from({ length: SECRETS }, (_, i) => ({
    namespace: `tenant-${i % 50}`,
    name: `app-${i}-credentials`,
    resourceVersion: String(1000 + i),
    data: { token: randomBytes(1024).toString("latin1") },
  })),
  watches: { registry: "100", secrets: [{ namespace: null, resourceVersion: "20000" }] },
};
const key = new StateKey(randomBytes(32));
const dir = mkdtempSync(join(process.env.STATE_DIR ?? tmpdir(), "state-measure-"));
const path = join(dir, "state");

const time = async (fn: () => unknown): Promise<number> => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};
/** The longest the event loop went without a turn while `fn` ran: what a request waited. */
const longestTurn = async (fn: () => Promise<unknown>): Promise<number> => {
  let [last, longest, running] = [performance.now(), 0, true];
  const tick = (): void => {
    if (!running) return;
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    setImmediate(tick);
  };
  setImmediate(tick);
  await fn();
  running = false;
  return Math.max(longest, performance.now() - last);
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const steps: Record<string, number[]> = {};
const record = (name: string, ms: number): void => {
  steps[name] = [...(steps[name] ?? []), ms];
};

const readAll = async (): Promise<void> => {
  const r = await readStateFile({ path, key, maxAgeMs: 3_600_000, now: Date.now(), config });
  if (!r.ok) throw new Error(r.error.message);
};

try {
  // What a sidecar pays once: the first write after start, the warm start's one read.
  const coldWrite = await time(() => writeStateFile(path, key, state));
  const coldRead = await time(readAll);
  console.log(`cold: first write ${coldWrite.toFixed(1)} ms, first read ${coldRead.toFixed(1)} ms`);
  for (let round = 0; round < ROUNDS; round += 1) {
    let plain: Buffer = Buffer.alloc(0);
    let sealed: Buffer = Buffer.alloc(0);
    record("encode", await time(() => (plain = encodeState(state))));
    record("seal", await time(() => (sealed = seal(plain, key))));
    record("atomic write", await time(() => writeFileAtomic(path, sealed)));
    record("writeStateFile (all three)", await time(() => writeStateFile(path, key, state)));
    record("  its longest turn", await longestTurn(() => writeStateFile(path, key, state)));
    let file: Buffer = Buffer.alloc(0);
    record(
      "read file",
      await time(async () => {
        const r = await readFileCapped(path, 1 << 30);
        if (r.ok) file = r.value;
      }),
    );
    let opened: Buffer = Buffer.alloc(0);
    record(
      "unseal",
      await time(() => {
        const r = unseal(file, key);
        if (r.ok) opened = r.value;
      }),
    );
    record("decode", await time(() => decodeState(opened)));
    record("readStateFile (all)", await time(readAll));
    if (round === 0) console.log(`document ${plain.length} bytes, file ${sealed.length} bytes`);
  }
  for (const [name, ms] of Object.entries(steps))
    console.log(
      `${name.padEnd(28)} median ${median(ms).toFixed(1)} ms  (${ms.map((m) => m.toFixed(0)).join(" ")})`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
