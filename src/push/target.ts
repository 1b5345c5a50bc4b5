// What the pusher knows of a proxy: a name, a way to replace the table it holds, a way to ask
// which revision it holds, and a way to check what it holds entry by entry (ADR 51). Each proxy's
// client (HAProxy, Caddy, nginx) is one of these.

import type { Result } from "../result.ts";
import type { PushView } from "../snapshot/types.ts";

/** Why a push, a version check or a verification did not succeed. */
export type PushFailureReason =
  /** Nothing listens where the proxy's runtime interface should be (refused, no socket). */
  | "unreachable"
  /** No complete answer in time. */
  | "timeout"
  /** The proxy answered, and refused the table or the request. */
  | "rejected"
  /** The proxy answered something this client does not understand. */
  | "protocol";

export interface PushFailure {
  readonly reason: PushFailureReason;
  /** For logs: what failed, never table contents beyond a hostname. */
  readonly message: string;
}

export interface PushOptions {
  /**
   * Send the whole table even where the target could send less (nginx's changes since its last
   * whole table, ADR 44): the proxy's table was found changed behind the pusher's back.
   */
  readonly whole?: boolean;
}

export interface VerifyOptions {
  /**
   * Read every entry from the proxy's table now, even where the proxy keeps a digest up to date as
   * it is written (nginx) or only the small part a change writes is read (HAProxy's overlays, ADR
   * 70): what those cannot see, an entry changed in place behind the pusher's back, this finds.
   * Caddy always reads every entry.
   */
  readonly deep?: boolean;
}

/** One proxy's runtime interface, as the pusher drives it. Calls never overlap. */
export interface PushTarget {
  /** For metrics and logs: `haproxy`, `caddy`, `nginx`, or whatever the operator names it. */
  readonly name: string;
  /**
   * Replaces the proxy's whole table atomically: after success it answers from `view`'s table
   * (table.ts) only. Each target renders the table in its proxy's format.
   */
  push(view: PushView, options?: PushOptions): Promise<Result<void, PushFailure>>;
  /** The revision of the table the proxy answers from; null when it holds none (not synced). */
  held(): Promise<Result<number | null, PushFailure>>;
  /**
   * A digest of the table the proxy answers from, read from it now (every entry, or a digest the
   * proxy computes over every entry, or keeps as it writes them); null when it holds none. Costs
   * more than `held`; with `deep`, as much as reading every entry.
   */
  heldDigest(options?: VerifyOptions): Promise<Result<string | null, PushFailure>>;
  /**
   * The digest `heldDigest(options)` gives while the proxy answers from exactly `view`'s table as
   * this target pushed it, whatever order the proxy keeps its entries in. Computed once per view
   * (a shallow one of HAProxy once per push of it: ADR 70).
   */
  digestOf(view: PushView, options?: VerifyOptions): string;
  /**
   * `digestOf(view)`, computed in slices that give the event loop a turn: for a target whose
   * digest hashes the whole table (nginx: 10 MB at 100k Apps), so that a push never waits for it.
   */
  digestOfSliced?(view: PushView, options?: VerifyOptions): Promise<string>;
}
