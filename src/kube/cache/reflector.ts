// client-go's Reflector for Secrets: list (paged), deliver, then watch from the list's
// resourceVersion; resume after a watch ends; relist on 410 Gone. It keeps a key →
// resourceVersion index, never object data, and hands a list on page by page, so 50,000
// unrelated Secrets cost an index entry each and one page of objects at a time.

import { sleep } from "../../clock.ts";
import { err, ok, type Result } from "../../result.ts";
import { startDeadline, withDeadline } from "./deadline.ts";
import { KnownVersions } from "./known-versions.ts";
import {
  type ApiError,
  type ListWatch,
  type SecretObject,
  secretKey,
  type WatchStream,
} from "./list-watch.ts";
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
import {
  isUnservableVersion,
  NO_HEADERS,
  type RestartPolicy,
  statusError,
  type WatchOutcome,
  watchFailed,
} from "./restart-policy.ts";

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
  #lastSyncResourceVersion = "";
  /** A list at a resourceVersion failed as unservable: the next list is a consistent read. */
  #lastSyncUnavailable = false;
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
      for (const [key, resourceVersion] of resume.known) this.#known.remember(key, resourceVersion);
      this.#lastSyncResourceVersion = resume.resourceVersion;
    }
    this.#loop = this.#run(resume === undefined);
  }

  /** True once the first complete list was delivered, or a resumed run's watch delivered something. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the next watch would start from ("" before the first list). */
  lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
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
        if (relist) {
          const listed = await this.#list();
          if (this.#stopped) return;
          if (!listed.ok) {
            await this.#pause(this.#policy.afterListFailure(this.#o.clock.now(), listed.error));
            continue;
          }
          relist = false;
        }
        const outcome = await this.#watch();
        if (outcome === undefined || this.#stopped) return;
        this.#report({
          kind: "watch-restart",
          reason: outcome.reason,
          resourceVersion: this.#lastSyncResourceVersion,
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

  /**
   * The resourceVersion of the next list, as client-go's reflector chooses it (ADR 16): "0" for
   * the first (any recent state, from the API server's watch cache), the last synced version for
   * a relist (not older than what was delivered), and "" (the latest state, read consistently
   * and paged) once a list at a version failed because the server could not serve it.
   */
  #listResourceVersion(): string {
    if (this.#lastSyncUnavailable) return "";
    return this.#lastSyncResourceVersion === "" ? "0" : this.#lastSyncResourceVersion;
  }

  /** Lists every page and delivers the differences to the index; sets lastSyncResourceVersion. */
  async #list(): Promise<Result<void, ApiError>> {
    const seen = new Set<string>();
    const onItem = (item: SecretObject): void => {
      const key = secretKey(item.metadata);
      seen.add(key);
      const type = this.#known.listed(item, key);
      if (type !== undefined) this.#handler.onEvent({ type, object: item });
    };
    const asked = this.#listResourceVersion();
    const listed = await listAllPages(
      (options, onPageItem) =>
        this.#request((signal, onActivity) =>
          this.#lw.list({ ...options, signal, onActivity }, onPageItem),
        ),
      asked,
      this.#o.pageSize,
      onItem,
      (status) => this.#report(status),
      () => seen.clear(),
    );
    if (this.#stopped) return err({ kind: "aborted" });
    if (!listed.ok) {
      this.#report({ kind: "error", phase: "list", error: listed.error });
      if (asked !== "" && isUnservableVersion(listed.error)) {
        // Not a failure of the server: this version cannot be served (410, or a watch cache
        // behind it). Read the latest state consistently instead, at once, as client-go does.
        this.#lastSyncUnavailable = true;
        return this.#list();
      }
      return listed;
    }
    const { resourceVersion, pages } = listed.value;
    for (const gone of this.#known.removeAllBut(seen))
      this.#handler.onEvent({ type: "DELETED", object: gone });
    this.#handler.onListed(seen, resourceVersion);
    this.#lastSyncResourceVersion = resourceVersion;
    this.#lastSyncUnavailable = false;
    this.#policy.healthy(this.#o.clock.now());
    this.#report({ kind: "listed", resourceVersion, items: seen.size, pages });
    if (!this.#synced) this.#markSynced();
    return ok(undefined);
  }

  #markSynced(): void {
    this.#synced = true;
    this.#handler.onSynced();
  }

  /** One watch, from open to end; undefined when stopped. */
  async #watch(): Promise<WatchOutcome | undefined> {
    const timeoutSeconds = Math.floor(this.#o.watchTimeoutSeconds * (1 + this.#o.random()));
    // A healthy watch is never silent longer than its own timeoutSeconds: the server ends it
    // then. Past that plus a grace, the connection is presumed half-open.
    const deadlineMs = timeoutSeconds * 1000 + this.#o.inactivityGraceMs;
    const controller = this.#attempt();
    let stream: WatchStream | undefined;
    let inactive = false;
    const deadline = startDeadline(this.#o.clock, deadlineMs, () => {
      inactive = true;
      controller.abort();
      stream?.close();
    });
    const started = this.#o.clock.now();
    let events = 0;
    const end = (rest: Omit<WatchOutcome, "events" | "elapsedMs">): WatchOutcome => ({
      ...rest,
      events,
      elapsedMs: this.#o.clock.now() - started,
    });
    try {
      const opened = await this.#lw.watch({
        resourceVersion: this.#lastSyncResourceVersion,
        timeoutSeconds,
        signal: controller.signal,
        onActivity: deadline.touch,
      });
      if (this.#stopped) return undefined;
      if (!opened.ok) return end(inactive ? NO_HEADERS : watchFailed(opened.error));
      stream = opened.value;
      deadline.touch();
      this.#policy.healthy(this.#o.clock.now());
      for await (const item of stream) {
        deadline.touch();
        if (!item.ok)
          return end({
            reason: item.error.kind === "decode" ? "decode" : "dropped",
            error: item.error,
          });
        const event = item.value;
        if (event.type === "ERROR") return end(watchFailed(statusError(event.status)));
        events += 1;
        // A resumed run is current once its watch delivered something: the server held the
        // version it resumed from (a 410 would have come as an ERROR, and a relist instead).
        if (!this.#synced) this.#markSynced();
        if (event.type === "BOOKMARK") {
          this.#lastSyncResourceVersion = event.resourceVersion;
          this.#handler.onBookmark(event.resourceVersion);
          continue;
        }
        this.#known.watched(event.type, event.object);
        this.#lastSyncResourceVersion = event.object.metadata.resourceVersion;
        this.#handler.onEvent({ type: event.type, object: event.object });
      }
      if (this.#stopped) return undefined;
      if (inactive) return end({ reason: "inactive" });
      // The server's end at its timeoutSeconds is the normal case; earlier is a plain close.
      return end({
        reason: this.#o.clock.now() - started >= timeoutSeconds * 900 ? "timeout" : "closed",
      });
    } finally {
      deadline.cancel();
      stream?.close();
      if (this.#current === controller) this.#current = undefined;
    }
  }
}
