// What the TLS part of the data-plane suite saves (tls-phase.ts), read back by its report.

import type { PlaneKind } from "../../test/support/data-plane.ts";

/** One round on one side: a handshake run, then a kept-alive run over TLS. */
export interface TlsRound {
  readonly handshakesPerS: number;
  readonly handshakeFailures: number;
  /** The proxy's CPU (every process of it) over the handshake run, per handshake, µs. */
  readonly proxyCpuUsPerHandshake: number;
  /** Requests per second over kept-alive TLS connections. */
  readonly rps: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly failures: number;
}

/** Rotations under a handshake load: each one's time, and the handshakes made meanwhile. */
export interface TlsRotations {
  /** From just before the API write to the first handshake served the renewed one, ms. */
  readonly samples: readonly number[];
  /** Handshakes the background load completed meanwhile. */
  readonly handshakes: number;
  /** Of the background load's and the timing asks': connections that failed. */
  readonly failed: number;
}

export interface TlsData {
  readonly apps: number;
  readonly certificates: number;
  readonly rounds: number;
  readonly seconds: number;
  /** Concurrent loops of the handshake load. */
  readonly handshakeConnections: number;
  /** Connections of the kept-alive load. */
  readonly connections: number;
  /** By proxy: each round's result with certificates pushed and loaded from files. */
  readonly runs: Partial<
    Record<PlaneKind, { readonly pushed: readonly TlsRound[]; readonly files: readonly TlsRound[] }>
  >;
  /** By proxy: the rotations on the pushed side. */
  readonly rotations: Partial<Record<PlaneKind, TlsRotations>>;
  /** By proxy: why it was not measured. */
  readonly unmeasured: Record<string, string>;
}
