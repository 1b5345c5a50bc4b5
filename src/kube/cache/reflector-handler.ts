import { type ObjectEventType, type SecretObject, secretKey } from "./list-watch.ts";
import type { ReflectorStatus } from "./reflector-status.ts";

/**
 * Receives the reflected state. Called synchronously and in order; a throw is caught and
 * reported as a `handler-error` status, and never stops the reflector.
 */
export interface ReflectorHandler {
  /**
   * One change. Watch events arrive as the server typed them. A list delivers ADDED for new
   * keys, MODIFIED for keys whose resourceVersion changed (an unchanged one is not delivered
   * again) and, after its last page, DELETED for known keys missing from it; such a DELETED
   * carries only namespace, name and the last delivered resourceVersion, no data.
   */
  onEvent(event: { readonly type: ObjectEventType; readonly object: SecretObject }): void;
  /**
   * Once, when the handler's state is known current: after the first complete list was
   * delivered, or, for a resumed reflector, when its watch first delivered an event or a bookmark.
   */
  onSynced(): void;
  /**
   * After every complete list (the first and each relist), once its changes were delivered:
   * the keys (`namespace/name`) it held, to read during the call, and its resourceVersion. A
   * handler that learned of Secrets some other way (a GET) reconciles them here: absent from
   * the list means deleted.
   */
  onListed?(keys: ListedKeys, resourceVersion: string): void;
  /** A BOOKMARK arrived: the server is alive and the watch current, with nothing to deliver. */
  onBookmark?(resourceVersion: string): void;
}

/** The keys a complete list held. */
export interface ListedKeys {
  has(key: string): boolean;
  readonly size: number;
}

/** The same calls as a `ReflectorHandler`, each of which never throws. */
export type GuardedHandler = Required<ReflectorHandler>;

/** Wraps a handler so that a throw from it becomes a `handler-error` status instead. */
export function guardHandler(
  handler: ReflectorHandler,
  report: (status: ReflectorStatus) => void,
): GuardedHandler {
  const guard = (event: "SYNCED" | "BOOKMARK" | "LISTED", call: () => void): void => {
    try {
      call();
    } catch (error) {
      report({ kind: "handler-error", event, error });
    }
  };
  return {
    // Called once per listed item: no closure per call.
    onEvent(e) {
      try {
        handler.onEvent(e);
      } catch (error) {
        report({ kind: "handler-error", event: e.type, key: secretKey(e.object.metadata), error });
      }
    },
    onSynced: () => guard("SYNCED", () => handler.onSynced()),
    onListed: (keys, rv) => guard("LISTED", () => handler.onListed?.(keys, rv)),
    onBookmark: (rv) => guard("BOOKMARK", () => handler.onBookmark?.(rv)),
  };
}
