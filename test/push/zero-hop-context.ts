// What the zero-hop suite (zero-hop-suite.ts) hands the cases it runs from other files: one
// proxy, started with its shipped configuration, a pusher keeping its table, and what a client
// should see from a Snapshot.

import type { Snapshot } from "../../src/snapshot/types.ts";
import type { RawResponse } from "../support/raw-http.ts";
import type { RefusedAnswers, ZeroHopAnswer, ZeroHopRequest } from "../support/zero-hop.ts";
import type { ZeroHopProxy } from "../support/zero-hop-proxies.ts";

export interface ZeroHopContext {
  /** The proxy's name, for messages. */
  readonly name: string;
  readonly answers: RefusedAnswers;
  /** Property runs: each is one or two pushes and up to 15 requests. */
  readonly runs: number;
  /** Per property run, the Snapshots of Secret changes pushed after the first. */
  readonly changeSteps: number;
  /** The echo upstreams' URLs (once the suite started them). */
  urls(): readonly string[];
  /** The running proxy (once the suite started it). */
  proxy(): ZeroHopProxy;
  /** A revision above every one pushed so far. */
  nextRevision(): number;
  /** Publishes `snapshot` to the pusher and waits until the proxy holds it, digest checked. */
  pushed(snapshot: Snapshot): Promise<void>;
  /** One request through the proxy. */
  through(request: ZeroHopRequest): Promise<ZeroHopAnswer>;
  /** One request through the proxy, and the whole response the client got. */
  exchange(request: ZeroHopRequest): Promise<{ answer: ZeroHopAnswer; response: RawResponse }>;
  /**
   * What the client must see for `request` (its Host, target, and the `authorization` header it
   * sends, if any) from `/v1/route`'s answer over `snapshot`.
   */
  expected(snapshot: Snapshot | null, request: ZeroHopRequest): ZeroHopAnswer;
}
