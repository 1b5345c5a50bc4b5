// How the TLS part starts each proxy that terminates TLS: its shipped zero-hop configuration, the
// certificates pushed by its sidecar, or the same configuration loading the same certificates
// from files (one PEM each, chain then key), the way an operator without the sidecar would.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import type { ProxyLaunch } from "../../test/support/zero-hop-proxies.ts";

/** One certificate as files: the names it is served for, and its PEM (chain, then key). */
export interface CertificateFile {
  readonly names: readonly string[];
  readonly pem: string;
}

export interface TlsLaunches {
  pushed(binary: string, dir: string): Promise<ProxyLaunch>;
  files(
    binary: string,
    dir: string,
    certificates: readonly CertificateFile[],
  ): Promise<ProxyLaunch>;
}

/** The proxies the TLS part measures. */
export const TLS_LAUNCHES: Partial<Record<PlaneKind, TlsLaunches>> = {};
