import type { Clock } from "../clock.ts";
import type { ListWatch } from "../kube/cache/list-watch.ts";
import { Reflector, type ReflectorOptions } from "../kube/cache/reflector.ts";
import type { ReflectorHandler } from "../kube/cache/reflector-handler.ts";
import type { MirrorObserver } from "./observer.ts";

/** What the reflectors of one mirror share. */
export interface SharedReflectorSettings {
  readonly watchTimeoutSeconds: number;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly observer: Required<MirrorObserver>;
  /** Contact with the API server, told after the handler saw what came. */
  readonly contact: () => void;
  /**
   * Backoff and deadlines (tests shorten them), and what the reflectors know of streaming lists
   * (default: the process's; a test's sidecar is a process of its own).
   */
  readonly tuning?: Pick<
    ReflectorOptions,
    | "backoff"
    | "inactivityGraceMs"
    | "requestTimeoutMs"
    | "pageSize"
    | "relistSpreadMs"
    | "streamingLists"
  >;
}

/**
 * A reflector whose statuses the observer hears, and which reports contact with the API server:
 * a completed list, an event, a bookmark (a quiet cluster sends only those), or a watch that
 * ended on its own timeout. Contact is reported after the handler saw the event or the list; the
 * items of the first list count once, as it completes: before it nothing reflects a whole, and
 * a contact per item was 50 ms of the main thread at 100k Secrets, on the way to ready.
 */
export function observedReflector(
  name: string,
  listWatch: ListWatch,
  handler: Omit<ReflectorHandler, "onBookmark">,
  settings: SharedReflectorSettings,
): Reflector {
  const { observer, contact } = settings;
  let synced = false;
  return new Reflector({
    ...settings.tuning,
    name,
    listWatch,
    handler: {
      ...handler,
      onEvent: (event) => {
        handler.onEvent(event);
        if (synced) contact();
      },
      onSynced: () => {
        synced = true;
        handler.onSynced();
      },
      onBookmark: () => contact(),
    },
    watchTimeoutSeconds: settings.watchTimeoutSeconds,
    clock: settings.clock,
    ...(settings.random === undefined ? {} : { random: settings.random }),
    onStatus: (status) => {
      if (
        status.kind === "listed" ||
        (status.kind === "watch-restart" && status.reason === "timeout")
      ) {
        contact();
      }
      observer.reflector(name, status);
    },
  });
}
