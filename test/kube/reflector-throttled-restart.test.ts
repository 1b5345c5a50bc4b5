// Issue 45 item 5 at the reflector's seam: an API server restarts losing its watch history (every
// resume gets 410), then answers every list, streaming lists included, 429 `Retry-After: 3` for
// 8 s. The next list must come at most R after the last refusal, and the reflector never gives up.

import { describe, expect, it } from "vitest";
import type {
  ApiError,
  ListOptions,
  ListPage,
  ListWatch,
  SecretObject,
  WatchOptions,
  WatchStream,
} from "../../src/kube/cache/list-watch.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { err, ok, type Result } from "../../src/result.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import { FakeListWatch } from "../support/fake-list-watch.ts";
import { harness } from "../support/reflector-harness.ts";

const R = 3;
const throttled: ApiError = {
  kind: "http",
  status: 429,
  reason: "TooManyRequests",
  message: "Too many requests, please try again later.",
  retryAfterSeconds: R,
};

const unreachable: ApiError = { kind: "network", message: "connect ECONNREFUSED 127.0.0.1:6443" };

/** One request as the server saw it: when, what, from where, and its answer. */
interface Attempt {
  readonly at: number;
  readonly verb: "list" | "watch-list" | "watch";
  readonly from: string;
  readonly answer: 200 | 410 | 429;
}

/**
 * A server at resourceVersion 10, then 20 after its restart: a resume from before the restart gets
 * a 410 ERROR event; while throttled, every list and streaming list (and, with `watches`, every
 * watch) is answered 429. Streaming lists end their initial events at once.
 */
class RestartingServer implements ListWatch {
  readonly attempts: Attempt[] = [];
  readonly #streams = new FakeListWatch();
  clock: FakeClock | undefined;
  #rv = "10";
  #downUntil = Number.NEGATIVE_INFINITY;
  #throttledUntil = Number.NEGATIVE_INFINITY;
  #watchesThrottled = false;

  get #now(): number {
    return this.clock?.now() ?? 0;
  }

  /**
   * Cuts the open watch, forgets the history, refuses connections for `down` ms, then throttles
   * for `ms`.
   */
  restart(ms: number, options: { watches?: boolean; down?: number } = {}): void {
    this.#rv = "20";
    this.#downUntil = this.#now + (options.down ?? 0);
    this.#throttledUntil = this.#downUntil + ms;
    this.#watchesThrottled = options.watches === true;
    this.#streams.current.drop("connection reset by peer");
  }

  #throttling(): boolean {
    return this.#now < this.#throttledUntil;
  }

  async list(
    options: ListOptions,
    _onItem: (item: SecretObject) => void,
  ): Promise<Result<ListPage, ApiError>> {
    if (this.#now < this.#downUntil) return err(unreachable);
    const from = options.resourceVersion ?? "";
    const answer = this.#throttling() ? 429 : 200;
    this.attempts.push({ at: this.#now, verb: "list", from, answer });
    return answer === 429 ? err(throttled) : ok({ resourceVersion: this.#rv });
  }

  async watch(options: WatchOptions): Promise<Result<WatchStream, ApiError>> {
    if (this.#now < this.#downUntil) return err(unreachable);
    const streaming = options.sendInitialEvents === true;
    const from = options.resourceVersion;
    const refused = this.#throttling() && (streaming || this.#watchesThrottled);
    const expired = !streaming && from !== this.#rv;
    const answer = refused ? 429 : expired ? 410 : 200;
    this.attempts.push({ at: this.#now, verb: streaming ? "watch-list" : "watch", from, answer });
    if (refused) return err(throttled);
    const opened = await this.#streams.watch(options);
    if (!opened.ok) return opened;
    if (expired) this.#streams.current.error({ code: 410, reason: "Expired" });
    else if (streaming) this.#streams.current.endInitialEvents(this.#rv);
    return opened;
  }

  get(): Promise<Result<SecretObject | null, ApiError>> {
    return Promise.resolve(ok(null));
  }
}

/**
 * A synced reflector against the server; `streaming`: the server serves streaming lists. Random
 * draws are the worst (0.999) unless `random` says otherwise.
 */
async function synced(streaming: boolean, random = 0.999) {
  const server = new RestartingServer();
  const h = harness({
    listWatch: server,
    random: () => random,
    // Watches that outlive the test's window: only the restart ends them.
    watchTimeoutSeconds: 60,
    streamingLists: new StreamingLists(streaming),
  });
  server.clock = h.clock;
  await h.start();
  return { h, server };
}

/** The requests a synced reflector made up to `untilMs` after the server restarted. */
async function attemptsAfterRestart(
  streaming: boolean,
  restart: Parameters<RestartingServer["restart"]>,
  untilMs = 20_000,
) {
  const { h, server } = await synced(streaming);
  server.restart(...restart);
  await h.clock.advance(untilMs);
  return { attempts: server.attempts, synced: h.reflector.lastSyncResourceVersion() };
}

describe("Reflector: a restart losing the watch history, then lists throttled", () => {
  it("streams again within the spread, then exactly R after each refusal: ≤ R after the end", async () => {
    expect(await attemptsAfterRestart(true, [8_000])).toEqual({
      attempts: [
        { at: 0, verb: "watch-list", from: "", answer: 200 },
        { at: 0, verb: "watch", from: "10", answer: 410 },
        // The relist spread (5 s) at its worst draw, then Retry-After exactly.
        { at: 4_995, verb: "watch-list", from: "10", answer: 429 },
        { at: 7_995, verb: "watch-list", from: "10", answer: 429 },
        { at: 10_995, verb: "watch-list", from: "10", answer: 200 },
      ],
      synced: "20",
    });
  });

  // The attempts of the next two, each as `<ms> <verb> <from> <answer>`.
  const traced = (attempts: readonly Attempt[]) =>
    attempts.map((a) => `${a.at} ${a.verb} ${a.from || '""'} ${a.answer}`).join("; ");

  it("does the same with paged lists when the server refuses streaming ones", async () => {
    const { attempts } = await attemptsAfterRestart(false, [8_000]);
    expect(traced(attempts)).toBe(
      "0 list 0 200; 0 watch 10 200; 0 watch 10 410; 4995 list 10 429; 7995 list 10 429; 10995 list 10 200; 10995 watch 20 200",
    );
  });

  it("relists at once after a 410 the server paced with Retry-After: no spread on top", async () => {
    const { attempts } = await attemptsAfterRestart(true, [8_000, { watches: true }]);
    expect(traced(attempts)).toBe(
      '0 watch-list "" 200; 0 watch 10 429; 3000 watch 10 429; 6000 watch 10 429; 9000 watch 10 410; 9000 watch-list 10 200',
    );
  });

  it("never stops trying through a long throttle, every R exactly", async () => {
    const { h, server } = await synced(true);
    server.restart(600_000);
    await h.clock.advance(610_000);
    const lists = server.attempts.filter((a) => a.verb === "watch-list").slice(1);
    const gaps = new Set(lists.slice(1).map((a, i) => a.at - lists[i]!.at));
    expect({
      gaps: [...gaps],
      refused: lists.filter((a) => a.answer === 429).length,
      last: lists.at(-1),
    }).toEqual({
      gaps: [R * 1000],
      refused: 199,
      last: { at: 601_995, verb: "watch-list", from: "10", answer: 200 },
    });
  });

  it("relists after a 410 without the backoff an outage grew, even after a watch that ended at once", async () => {
    // No jitter and no spread: the paged list's watch ends at once (a quick end), the restart's
    // 10 s of refused connections grow the backoff to 6.4 s, then the resume gets its 410.
    const { h, server } = await synced(false, 0);
    server.restart(8_000, { down: 10_000 });
    await h.clock.advance(30_000);
    expect({
      lists: server.attempts.filter((a) => a.verb === "list").slice(1),
      waits: h.reported("backoff").map((b) => b.delayMs),
    }).toEqual({
      lists: [
        { at: 12_000, verb: "list", from: "10", answer: 429 },
        { at: 15_000, verb: "list", from: "10", answer: 429 },
        { at: 18_000, verb: "list", from: "10", answer: 200 },
      ],
      waits: [800, 1_600, 3_200, 6_400, 3_000, 3_000],
    });
  });
});
