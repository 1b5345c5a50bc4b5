import type { ObjectEventType, SecretObject } from "../kube/cache/list-watch.ts";
import { ownRecord } from "../kube/codec/secret-data.ts";
import { UNKEPT_VALUE } from "../snapshot/types.ts";

/** An App Secret event held back. */
type Held = readonly [ObjectEventType, SecretObject];

/**
 * App Secret events delivered while the first Registry is checked (ADR 88), held in order until
 * its check says which Secrets the store keeps. When no value is ever read for its bytes (no
 * served credential or certificate, ADR 68), each is held as the store would keep it, a key's
 * presence only: 100k listed Secrets of 1 KiB held whole were 100 MiB more at the peak.
 */
export class HeldEvents {
  readonly #presenceOnly: boolean;
  #held: Held[] = [];

  constructor(served: {
    readonly serveCredentials?: boolean;
    readonly serveCertificates?: boolean;
  }) {
    this.#presenceOnly = served.serveCredentials !== true && served.serveCertificates !== true;
  }

  push(type: ObjectEventType, object: SecretObject): void {
    this.#held.push([type, this.#presenceOnly ? presenceOf(object) : object]);
  }

  /** The events held, in order; none are held afterwards. */
  take(): readonly Held[] {
    const held = this.#held;
    this.#held = [];
    return held;
  }
}

/** `object` with each value as a key read for its presence keeps it: "" or UNKEPT_VALUE. */
function presenceOf(object: SecretObject): SecretObject {
  if (object.data === undefined) return object;
  const data = ownRecord<string>();
  for (const [key, value] of Object.entries(object.data))
    data[key] = value === "" ? "" : UNKEPT_VALUE;
  return { ...object, data };
}
