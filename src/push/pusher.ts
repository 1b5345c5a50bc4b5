// One proxy's pusher: keeps the proxy's zero-hop table equal to the newest published Snapshot.
// Buffered-one, on the mirror's coalescer: one operation at a time; Snapshots published while a
// push runs leave exactly one follow-up, which takes the newest. A version check after every push
// and on a timer notices a proxy that restarted or lost its table, and pushes again; a
// verification on a slower timer compares a digest of every entry the proxy holds with the
// digest of what was pushed, and pushes the whole table again when they differ (ADR 51). A
// verification reads every entry and every credential (10 MB at 10k Apps with 1 KiB values), so
// it runs beside pushes, never ahead of one: a rotation does not wait for it. Between deep
// verifications, which read every entry, a shallow one reads what a change writes: nginx's digest
// kept as it writes, HAProxy's overlays and its big maps' counts (ADR 70).

import type { Clock } from "../clock.ts";
import { AT_ONCE, Coalescer } from "../coalescer.ts";
import type { SnapshotSink } from "../mirror/sink.ts";
import type { PushView } from "../snapshot/types.ts";
import type { PushObserver, PushOperation } from "./observer.ts";
import type { PushFailure, PushTarget } from "./target.ts";

export interface PusherOptions {
  readonly target: PushTarget;
  readonly clock: Clock;
  readonly observer: PushObserver;
  /** Between version checks; also how soon a failed push is tried again. */
  readonly checkIntervalMs?: number;
  /**
   * Between verifications of the proxy's table entry by entry: the longest a table changed
   * behind the pusher's back (same revision, other entries) goes unnoticed.
   */
  readonly verifyIntervalMs?: number;
  /**
   * Between deep verifications, which read every entry even where the proxy keeps a digest as it
   * is written (`VerifyOptions.deep`): the longest an entry changed by another writer of the
   * proxy's memory goes unnoticed. A verification after a failed push is deep too.
   */
  readonly deepVerifyIntervalMs?: number;
}

/** One proxy's pusher, and the mirror's sink for it, named after its target. */
export interface Pusher extends SnapshotSink {
  /** The newest Snapshot (or any view of one): pushed as soon as no push is running. */
  publish(view: PushView): void;
  /** The revision the proxy answers from as last seen; null before the first push lands. */
  held(): number | null;
  /**
   * Resolves once the first verification has ended, whatever it found: it runs as soon as the
   * first push is confirmed, or at the first verification interval when none is by then (a
   * proxy not up yet), which finds nothing to compare. Resolves on close too.
   */
  readonly firstVerified: Promise<void>;
  /** Stops the timers, waits for a running push, check or verification; then pushes nothing. */
  close(): Promise<void>;
}

/** 250 ms: a restarted proxy answers not-synced for at most this long plus one push. */
export const DEFAULT_CHECK_INTERVAL_MS = 250;

/**
 * 5 s, the documented bound (README, "Zero-hop mode"; ADR 51) on how long a table changed behind
 * the pusher's back serves: a verification reads (HAProxy, Caddy) or has the proxy hash (nginx)
 * every entry, 2 to 24 ms of CPU on either side at 10k Apps, too much for every version check.
 */
export const DEFAULT_VERIFY_INTERVAL_MS = 5_000;

/**
 * 60 s: a deep verification reads every entry, at 100k Apps 200k keys in nginx's worker (600 ms)
 * or 12 MB of HAProxy's maps in the sidecar (200 ms), which every 5 s shared the cores with
 * rotations (ADR 70).
 */
export const DEFAULT_DEEP_VERIFY_INTERVAL_MS = 60_000;

/**
 * A verification that a push overlapped may have read a table half changed, so it is dropped;
 * after this many dropped in a row the next one holds pushes back until it ends, so that a stream
 * of changes cannot keep a table changed behind the pusher's back unnoticed for longer than this
 * many intervals and one.
 */
export const MAX_DROPPED_VERIFICATIONS = 3;

/** Most views a verification's answer is compared with: the one it began with, then the newest. */
const MAX_CANDIDATES = 8;

/**
 * Starts pushing to `target`. Nothing is pushed before the first `publish`; from then on the
 * proxy holds the newest published view's table, give or take one push; a proxy that lost it
 * gets it again within a check interval plus one push, and one whose table changed behind the
 * pusher's back (another writer, lost entries) gets it whole within a verification interval plus
 * one push (under a stream of pushes, MAX_DROPPED_VERIFICATIONS + 1 intervals). Failures are
 * reported and retried at the next check, never in a tight loop.
 */
export function startPusher(options: PusherOptions): Pusher {
  const { target, clock, observer } = options;
  const interval = options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
  const verifyInterval = options.verifyIntervalMs ?? DEFAULT_VERIFY_INTERVAL_MS;
  const deepInterval = options.deepVerifyIntervalMs ?? DEFAULT_DEEP_VERIFY_INTERVAL_MS;
  let latest: PushView | null = null;
  // The view whose table the proxy was last confirmed to hold.
  let inProxy: PushView | null = null;
  let heldRevision: number | null = null;
  // A push failed: wait for the next tick rather than retrying at once.
  let blocked = false;
  // The proxy's table changed behind the pusher's back: the next push sends it whole.
  let wholeNext = false;
  let checkDue = false;
  let verifyDue = false;
  // When the last deep verification began; a failed push or an uncounted deep one makes the next deep.
  let deepAt = clock.now();
  let deepDue = false;
  let verifying: Promise<void> | null = null;
  let pushesBegun = 0;
  let dropped = 0;
  // While a verification reads: the views confirmed in the proxy since it began, oldest first.
  let confirmedSince: PushView[] | null = null;
  let closed = false;
  let confirmedOnce = false;
  const firstVerified = Promise.withResolvers<void>();
  let cancelTimer = clock.setTimer(interval, tick);
  let cancelVerifyTimer = clock.setTimer(verifyInterval, verifyTick);

  function tick(): void {
    if (closed) return;
    checkDue = true;
    blocked = false;
    cancelTimer = clock.setTimer(interval, tick);
    kick();
  }

  function verifyTick(): void {
    if (closed) return;
    verifyDue = true;
    cancelVerifyTimer = clock.setTimer(verifyInterval, verifyTick);
    kick();
  }

  // A bug that throws out of a run ends the process, as an unhandled rejection would.
  const runs = new Coalescer({
    run: work,
    schedule: AT_ONCE,
    onError: (error) =>
      queueMicrotask(() => {
        throw error;
      }),
  });
  const kick = (): void => runs.signal();

  async function work(): Promise<void> {
    while (!closed) {
      if (latest !== null && latest !== inProxy && !blocked) {
        // A push ends with a check of its own: it stands for the check that is due.
        checkDue = false;
        await pushNewest(latest);
      } else if (checkDue) {
        checkDue = false;
        await check();
      } else if (verifyDue && verifying === null) {
        verifyDue = false;
        if (dropped >= MAX_DROPPED_VERIFICATIONS) await verify();
        else
          verifying = verify().finally(() => {
            verifying = null;
            kick();
          });
      } else return;
    }
  }

  async function pushNewest(view: PushView): Promise<void> {
    const started = clock.now();
    pushesBegun++;
    const pushed = await target.push(view, { whole: wholeNext });
    if (!pushed.ok) return fail("push", pushed.error, started);
    // The check after every push: the proxy confirms the commit, and a restart that raced the
    // push shows here rather than at the next tick.
    const held = await target.held();
    if (!held.ok) return fail("push", held.error, started);
    if (held.value !== view.revision) {
      see(held.value);
      const message = `the proxy holds ${held.value ?? "no table"} right after revision ${view.revision} was pushed`;
      return fail("push", { reason: "rejected", message }, started);
    }
    // The first table is verified at once: its digest is then computed while the replica starts,
    // and a proxy that mangled it is caught now rather than a verification interval later.
    if (!confirmedOnce) verifyDue = true;
    confirmedOnce = true;
    inProxy = view;
    wholeNext = false;
    if (confirmedSince !== null) {
      confirmedSince.push(view);
      if (confirmedSince.length > MAX_CANDIDATES) confirmedSince.splice(1, 1);
    }
    see(view.revision);
    observer.pushed({
      target: target.name,
      revision: view.revision,
      durationMs: clock.now() - started,
    });
  }

  async function check(): Promise<void> {
    const started = clock.now();
    const held = await target.held();
    if (!held.ok) return fail("check", held.error, started);
    see(held.value);
    if (inProxy !== null && held.value !== inProxy.revision) {
      observer.lost({ target: target.name, expected: inProxy.revision, held: held.value });
      inProxy = null;
    }
  }

  async function verify(): Promise<void> {
    try {
      await verifyTable();
    } finally {
      firstVerified.resolve();
    }
  }

  async function verifyTable(): Promise<void> {
    const view = inProxy;
    // Nothing confirmed to compare with: a push is due, or the version check saw the table lost.
    if (view === null) return;
    const started = clock.now();
    const begun = pushesBegun;
    const deep = deepDue || started - deepAt >= deepInterval;
    deepDue = deep;
    if (deep) deepAt = started;
    confirmedSince = [view];
    const held = await target.heldDigest({ deep });
    const candidates = confirmedSince;
    confirmedSince = null;
    if (closed) return;
    if (!held.ok) return fail("verify", held.error, started);
    // A proxy that reads its table as of one moment (nginx) read the view confirmed when the
    // verification began or one a push confirmed while it read (a push of a few entries during a
    // verification of 100k): a match with any of them counts, so a verification that pushes came
    // through is not dropped, and the next does not hold pushes back (at 100k Apps nginx reads
    // for over a second, and rotations at 1/s had every fourth verification hold one back).
    if (inProxy !== null) {
      for (const candidate of candidates.reverse()) {
        const expected = await (target.digestOfSliced?.(candidate, { deep }) ??
          target.digestOf(candidate, { deep }));
        if (closed) return;
        if (held.value === expected) {
          dropped = 0;
          deepDue = false;
          return;
        }
      }
    }
    // Otherwise a push that overlapped may have let it read a table half changed.
    if (pushesBegun !== begun) {
      dropped++;
      return;
    }
    dropped = 0;
    deepDue = false;
    // A check found the table lost meanwhile: the push that follows settles it.
    if (inProxy !== view) return;
    if (held.value === null) {
      see(null);
      observer.lost({ target: target.name, expected: view.revision, held: null });
    } else observer.drifted({ target: target.name, revision: view.revision });
    inProxy = null;
    wholeNext = true;
  }

  function fail(operation: PushOperation, failure: PushFailure, started: number): void {
    if (operation === "push") {
      blocked = true;
      deepDue = true;
    }
    observer.failed({
      target: target.name,
      operation,
      ...failure,
      durationMs: clock.now() - started,
    });
  }

  function see(revision: number | null): void {
    if (revision === heldRevision) return;
    heldRevision = revision;
    observer.held({ target: target.name, revision });
  }

  return {
    name: target.name,
    publish(view) {
      if (closed) return;
      latest = view;
      kick();
    },
    held: () => heldRevision,
    firstVerified: firstVerified.promise,
    async close() {
      closed = true;
      firstVerified.resolve();
      cancelTimer();
      cancelVerifyTimer();
      await runs.stop();
      await verifying;
    },
  };
}
