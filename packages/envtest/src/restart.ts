/**
 * An API-server restart in place: the same port and the same objects, but the watch cache's
 * history is gone, as when kube-apiserver comes back and fills its cache from a fresh list. Clients
 * keep the address they hold, which is what a fleet of client processes needs.
 */

/** How the server behaves while it is down. */
export type DownMode = "refuse" | "unavailable";

/** What a restart does; every field is optional. */
export interface RestartOptions {
  /** How long the server stays down, in milliseconds (default 0). */
  readonly downMs?: number;
  /**
   * `refuse` (default): the process is gone; every connection, watches included, is cut and new
   * connections are refused until it is back. `unavailable`: it still listens, ends every watch
   * cleanly and answers every API request 503 ServiceUnavailable with `Retry-After: 1`.
   */
  readonly down?: DownMode;
}

/** The parts of a running server a restart acts on. */
interface RestartTarget {
  /** Stops listening and cuts every connection. */
  pause(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  /** Ends every open watch cleanly. */
  endWatches(): void;
  /** Marks the server up (undefined) or down in `mode`. */
  setDown(mode: DownMode | undefined): void;
  /** Moves the resourceVersion on and discards the event history up to it. */
  forgetHistory(): void;
  sleep(ms: number): Promise<void>;
}

/**
 * Restarts the server; resolves once it serves again. After it, a watch (or exact list) from any
 * resourceVersion a client saw before it gets 410 Expired, and lists and new watches work. The
 * resourceVersion moves on by one as the server comes back, as its own start-up writes move etcd's
 * revision, and the history is discarded up to there: writes made while it was down are not
 * resumable either, as a watch cache filled from a fresh list would not hold them.
 */
export async function restartInPlace(
  t: RestartTarget,
  options: RestartOptions = {},
): Promise<void> {
  const mode = options.down ?? "refuse";
  t.setDown(mode);
  if (mode === "refuse") await t.pause();
  else t.endWatches();
  try {
    if ((options.downMs ?? 0) > 0) await t.sleep(options.downMs ?? 0);
  } finally {
    t.forgetHistory();
    if (mode === "refuse") await t.resume();
    t.setDown(undefined);
  }
}
