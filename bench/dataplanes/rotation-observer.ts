// One rotation as clients see it: several kept-alive connections ask for the App's host at once,
// each answer classed by the digest of the `Authorization` its upstream got (the new value, the
// old one, anything else, or a failed connection). The rotation's time is the first answer with
// the new value on any connection; after it, every request sent must carry the new value: a
// request sent once a client has seen the new value and answered with the old one is what a
// stale worker, an old configuration still serving kept connections, or a second cache would
// show. Requests in flight when the first new answer came are not counted: the proxy may have
// decided them before the switch.

import type { AnswerProbe, ProbeAnswer } from "./answer-probe.ts";
import type { AfterNewCounts } from "./data.ts";

/** How one answer stood to the rotation. */
export type Seen = "new" | "old" | "other" | "failed";

/** One request of a rotation: when it was sent and answered (`performance.now()`), and what came. */
export interface Observed {
  readonly sentAt: number;
  readonly receivedAt: number;
  readonly seen: Seen;
}

/** What one rotation measured. */
export interface RotationOutcome {
  /** From `since` to the first answer with the new value, ms; null when none came. */
  readonly ms: number | null;
  /** The requests sent after that answer. */
  readonly after: AfterNewCounts;
}

export const NO_COUNTS: AfterNewCounts = { checked: 0, old: 0, other: 0, failed: 0 };

/** The counts of `a` and `b` together. */
export const addCounts = (a: AfterNewCounts, b: AfterNewCounts): AfterNewCounts => ({
  checked: a.checked + b.checked,
  old: a.old + b.old,
  other: a.other + b.other,
  failed: a.failed + b.failed,
});

/** The rotation's time from `since`, and the requests sent after its first new answer. Pure. */
export function rotationOutcome(observed: readonly Observed[], since: number): RotationOutcome {
  let first = Number.POSITIVE_INFINITY;
  for (const a of observed) if (a.seen === "new" && a.receivedAt < first) first = a.receivedAt;
  if (first === Number.POSITIVE_INFINITY) return { ms: null, after: NO_COUNTS };
  let after = NO_COUNTS;
  for (const a of observed) {
    if (a.sentAt <= first) continue;
    after = addCounts(after, {
      checked: 1,
      old: a.seen === "old" ? 1 : 0,
      other: a.seen === "other" ? 1 : 0,
      failed: a.seen === "failed" ? 1 : 0,
    });
  }
  return { ms: first - since, after };
}

/** A connection of a rotation and the pause it leaves between its requests. */
export interface Asker {
  readonly probe: AnswerProbe;
  readonly pauseMs: number;
}

/**
 * Every asker asks for `host` (a request, then its pause) until `checkMs` after the first answer
 * `classify` calls new, or `timeoutMs` after `since` without one; resolves with every request.
 */
export async function observeRotation(
  askers: readonly Asker[],
  host: string,
  classify: (answer: ProbeAnswer) => Seen,
  o: { readonly since: number; readonly checkMs: number; readonly timeoutMs: number },
): Promise<Observed[]> {
  const observed: Observed[] = [];
  let firstNew = Number.POSITIVE_INFINITY;
  const over = (now: number) => now >= firstNew + o.checkMs || now - o.since > o.timeoutMs;
  await Promise.all(
    askers.map(async ({ probe, pauseMs }) => {
      for (let now = performance.now(); !over(now); now = performance.now()) {
        const answer = await probe.ask(host).catch(() => null);
        const receivedAt = performance.now();
        const seen = answer === null ? "failed" : classify(answer);
        observed.push({ sentAt: now, receivedAt, seen });
        if (seen === "new") firstNew = Math.min(firstNew, receivedAt);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    }),
  );
  return observed;
}

/**
 * Asks for `host` every `pauseMs` until the upstream got `digest`; null then, or, after
 * `timeoutMs`, the last answer in words (`known` names the digests it may hold; never a value).
 */
export async function untilSeen(
  probe: AnswerProbe,
  host: string,
  digest: string,
  o: {
    readonly pauseMs: number;
    readonly timeoutMs: number;
    readonly known: Readonly<Record<string, string>>;
  },
): Promise<string | null> {
  const since = performance.now();
  for (;;) {
    const answer = await probe.ask(host).catch((e: unknown) => e as Error);
    if (!(answer instanceof Error) && answer.status === 200 && answer.seen === digest) return null;
    if (performance.now() - since > o.timeoutMs) return describeAnswer(answer, o.known);
    await new Promise((r) => setTimeout(r, o.pauseMs));
  }
}

/** An answer in words: its status and reason, and what the upstream got, by name only. */
export function describeAnswer(
  answer: ProbeAnswer | Error,
  known: Readonly<Record<string, string>>,
): string {
  if (answer instanceof Error) return `the connection failed (${answer.message})`;
  const status = `${answer.status}${answer.reason === null ? "" : ` ${answer.reason}`}`;
  if (answer.seen === null) return `${status}, not from the upstream`;
  if (answer.seen === "none") return `${status}, the upstream got no Authorization`;
  const got = answer.seen.split(",").map((d) => known[d] ?? "another value");
  return `${status}, the upstream got Authorization: ${got.join(" and ")}`;
}
