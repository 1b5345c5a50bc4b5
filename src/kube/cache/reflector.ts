// client-go's Reflector for Secrets: get the scope's state, deliver it, then watch on; resume
// after a watch ends; start over on 410 Gone. The state comes as a streaming list (a watch whose
// initial events are the list, as client-go's WatchListClient asks for it) or, from a server that
// refuses those, as a paged list followed by a watch from its resourceVersion (ADR 57). It keeps a
// key → resourceVersion index, never object data, and hands a list on item by item, so 50,000
// unrelated Secrets cost an index entry each and one object (or page) at a time.

import { sleep } from "../../clock.ts";
import { err, ok, type Result } from "../../result.ts";
import { withDeadline } from "./deadline.ts";
import { KnownVersions } from "./known-versions.ts";
import { ListDelivery } from "./list-delivery.ts";
import type { ApiError, ListWatch } from "./list-watch.ts";
import { listAllPages } from "./pager.ts";
import { type GuardedHandler, guardHandler } from "./reflector-handler.ts";
import {
  type ReflectorOptions,
  type ReflectorSettings,
  type ResumePoint,
  reflectorSettings,
  restartPolicyOf,
} from "./reflector-options.ts";
import type { ReflectorStatus } from "./reflector-status.ts";
import { isUnservableVersion, type RestartPolicy, type WatchOutcome } from "./restart-policy.ts";
import { refusesStreamingList } from "./streaming-lists.ts";
import { SyncPoint } from "./sync-point.ts";
import { type DeliveredEvent, watchOnce } from "./watch-once.ts";

export type { ReflectorOptions, ResumePoint } from "./reflector-options.ts";

/** Lists and watches one ListWatch into a handler until stopped. */
export class Reflector {
  readonly name: string;
  readonly #lw: ListWatch;
  readonly #handler: GuardedHandler;
  readonly #o: ReflectorSettings;
  readonly #policy: RestartPolicy;
  readonly #known = new KnownVersions();
  readonly #stop = new AbortController();
  #current: AbortController | undefined;
  #loop: Promise<void> | undefined;
  readonly #at = new SyncPoint();
  #synced = false;

  constructor(options: ReflectorOptions) {
    this.name = options.name;
    this.#lw = options.listWatch;
    this.#handler = guardHandler(options.handler, (status) => this.#report(status));
    this.#o = reflectorSettings(options);
    this.#policy = restartPolicyOf(options, this.#o.random);
  }

  /**
   * Starts the list-and-watch loop; later calls do nothing. With `resume`, the loop starts with a
   * watch from where a previous run got (a relist follows if the server cannot serve it).
   */
  start(resume?: ResumePoint): void {
    if (this.#loop !== undefined || this.#stop.signal.aborted) return;
    if (resume !== undefined) {
      this.#known.seed(resume.known);
      this.#at.resourceVersion = resume.resourceVersion;
    }
    this.#loop = this.#run(resume === undefined);
  }

  /**
   * True once the first complete list was delivered (paged, or streamed up to its end bookmark),
   * or a resumed run's watch delivered something.
   */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the next watch would start from ("" before the first list). */
  lastSyncResourceVersion(): string {
    return this.#at.resourceVersion;
  }

  /** Aborts the in-flight request and resolves once the loop has exited, with no timer left. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#current?.abort();
    await this.#loop;
  }

  get #stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  #report(status: ReflectorStatus): void {
    try {
      this.#o.onStatus(status);
    } catch {
      // A broken status sink must not break the mirror.
    }
  }

  async #run(listFirst: boolean): Promise<void> {
    let relist = listFirst;
    while (!this.#stopped) {
      try {
        // A streaming list is the watch itself: its initial events are the list.
        let streamed: ListDelivery | undefined;
        if (relist && this.#o.streamingLists.available) {
          streamed = new ListDelivery(this.#known, this.#handler);
        } else if (relist) {
          const listed = await this.#list();
          if (this.#stopped) return;
          if (!listed.ok) {
            await this.#pause(this.#policy.afterListFailure(this.#o.clock.now(), listed.error));
            continue;
          }
        }
        const outcome = await this.#watch(streamed);
        if (outcome === undefined || this.#stopped) return;
        if (streamed !== undefined && !streamed.complete) {
          relist = true;
          await this.#streamFailed(outcome);
          continue;
        }
        relist = false;
        this.#report({
          kind: "watch-restart",
          reason: outcome.reason,
          resourceVersion: this.#at.resourceVersion,
          events: outcome.events,
        });
        if (outcome.error) this.#report({ kind: "error", phase: "watch", error: outcome.error });
        const next = this.#policy.afterWatch(this.#o.clock.now(), outcome);
        if (next.relist !== undefined) this.#report({ kind: "relist", reason: next.relist });
        relist = next.relist !== undefined;
        if (next.delayMs > 0) await this.#pause(next.delayMs);
      } catch (bug) {
        // A bug in this loop must not freeze the mirror: report it and start over from a list.
        const message = bug instanceof Error ? bug.message : String(bug);
        this.#report({ kind: "error", phase: "internal", error: { kind: "bug", message } });
        this.#report({ kind: "relist", reason: "internal" });
        relist = true;
        await this.#pause(this.#policy.afterBug(this.#o.clock.now()));
      }
    }
  }

  async #pause(delayMs: number): Promise<void> {
    if (this.#stopped) return;
    this.#report({ kind: "backoff", delayMs });
    await sleep(this.#o.clock, delayMs, this.#stop.signal);
  }

  /** The controller for the next request; stop() aborts it, and it starts aborted after stop(). */
  #attempt(): AbortController {
    const controller = new AbortController();
    if (this.#stopped) controller.abort();
    this.#current = controller;
    return controller;
  }

  /** Runs one request under its own abort controller and the inactivity deadline. */
  async #request<T>(
    call: (signal: AbortSignal, onActivity: () => void) => Promise<Result<T, ApiError>>,
  ): Promise<Result<T, ApiError>> {
    const controller = this.#attempt();
    try {
      return await withDeadline(this.#o.clock, this.#o.requestTimeoutMs, controller, call);
    } finally {
      if (this.#current === controller) this.#current = undefined;
    }
  }

  /** Lists every page and delivers the differences to the index; sets lastSyncResourceVersion. */
  async #list(): Promise<Result<void, ApiError>> {
    const delivery = new ListDelivery(this.#known, this.#handler);
    const asked = this.#at.listFrom("list");
    const listed = await listAllPages(
      (options, onPageItem) =>
        this.#request((signal, onActivity) =>
          this.#lw.list({ ...options, signal, onActivity }, onPageItem),
        ),
      asked,
      this.#o.pageSize,
      (item) => delivery.item(item),
      (status) => this.#report(status),
      () => delivery.restart(),
    );
    if (this.#stopped) return err({ kind: "aborted" });
    if (!listed.ok) {
      this.#report({ kind: "error", phase: "list", error: listed.error });
      // Not a failure of the server: this version cannot be served (410, or a watch cache
      // behind it). Read the latest state consistently instead, at once, as client-go does.
      if (isUnservableVersion(listed.error) && this.#at.unservable(asked)) return this.#list();
      return listed;
    }
    const { resourceVersion, pages } = listed.value;
    const items = this.#listed(delivery, resourceVersion);
    this.#report({ kind: "listed", mode: "list", resourceVersion, items, pages });
    if (!this.#synced) this.#markSynced();
    return ok(undefined);
  }

  /** Ends a complete list at resourceVersion, from which the watch goes on; returns its size. */
  #listed(delivery: ListDelivery, resourceVersion: string): number {
    const items = delivery.finish(resourceVersion);
    this.#at.listed(resourceVersion);
    this.#policy.listed(this.#o.clock.now());
    return items;
  }

  /** One event before a streaming list's end bookmark: part of the list, or its end. */
  #initialEvent(streamed: ListDelivery, event: DeliveredEvent): void {
    if (event.type === "BOOKMARK") {
      // Only the annotated bookmark ends them; the server sends no other before it.
      if (event.initialEventsEnd !== true) return;
      const { resourceVersion } = event;
      const items = this.#listed(streamed, resourceVersion);
      this.#report({ kind: "listed", mode: "watch-list", resourceVersion, items });
      if (!this.#synced) this.#markSynced();
    } else if (event.type === "DELETED") streamed.removed(event.object);
    else streamed.item(event.object);
  }

  /**
   * A streaming list that ended before its end bookmark. Refused: this process lists from now on,
   * at once. Otherwise it failed as a list fails and starts over, from the latest state at once
   * when its version could not be served, after the list backoff when anything else went wrong.
   */
  async #streamFailed(outcome: WatchOutcome): Promise<void> {
    const { error } = outcome;
    if (error?.kind === "http" && refusesStreamingList(error)) {
      if (this.#o.streamingLists.refuse(error)) this.#report({ kind: "streaming-refused", error });
      return;
    }
    const asked = this.#at.listFrom("watch-list");
    const { reason, events } = outcome;
    this.#report({ kind: "watch-restart", reason, resourceVersion: asked, events });
    const failure = error ?? {
      kind: "network",
      message: `watch ended (${reason}) before its initial events did`,
    };
    this.#report({ kind: "error", phase: "list", error: failure });
    const unservable =
      reason === "expired" || (error?.kind === "http" && isUnservableVersion(error));
    if (unservable && this.#at.unservable(asked)) return;
    await this.#pause(this.#policy.afterListFailure(this.#o.clock.now(), failure));
  }

  #markSynced(): void {
    this.#synced = true;
    this.#handler.onSynced();
  }

  /**
   * One watch, from open to end; undefined when stopped. With `streamed`, a streaming list whose
   * initial events go to it until their end bookmark; the watch goes on from there.
   */
  async #watch(streamed?: ListDelivery): Promise<WatchOutcome | undefined> {
    const controller = this.#attempt();
    try {
      return await watchOnce({
        ...this.#o,
        listWatch: this.#lw,
        from:
          streamed === undefined
            ? { resourceVersion: this.#at.resourceVersion }
            : { resourceVersion: this.#at.listFrom("watch-list"), sendInitialEvents: true },
        controller,
        stopped: this.#stop.signal,
        onOpened: () => this.#policy.healthy(this.#o.clock.now()),
        onEvent: (event) =>
          streamed === undefined || streamed.complete
            ? this.#watched(event)
            : this.#initialEvent(streamed, event),
      });
    } finally {
      if (this.#current === controller) this.#current = undefined;
    }
  }

  /** One event of a watch past any initial events. */
  #watched(event: DeliveredEvent): void {
    // A resumed run is current once its watch delivered something: the server held the
    // version it resumed from (a 410 would have come as an ERROR, and a relist instead).
    if (!this.#synced) this.#markSynced();
    if (event.type === "BOOKMARK") {
      this.#at.resourceVersion = event.resourceVersion;
      this.#handler.onBookmark(event.resourceVersion);
      return;
    }
    this.#known.watched(event.type, event.object);
    this.#at.resourceVersion = event.object.metadata.resourceVersion;
    this.#handler.onEvent({ type: event.type, object: event.object });
  }
}
