// How the TLS part starts each proxy that terminates TLS: its shipped zero-hop configuration, the
// certificates pushed by its sidecar; or the same configuration loading the same certificates
// from files at its start, the way an operator without the sidecar would (each launch's
// `certificatesFrom`), its sidecar pushing the routing table only.

import { certificateEntries } from "../../src/push/certificates.ts";
import type { PushView } from "../../src/snapshot/types.ts";
import type { PlaneKind } from "../../test/support/data-plane.ts";
import {
  caddyLaunch,
  haproxyLaunch,
  nginxLaunch,
  type ProxyLaunch,
} from "../../test/support/zero-hop-proxies.ts";

export interface TlsLaunches {
  pushed(binary: string, dir: string): Promise<ProxyLaunch>;
  /** Loading `view`'s certificates from files, for the names a push would give them. */
  files(binary: string, dir: string, view: PushView): Promise<ProxyLaunch>;
}

/** The proxies the TLS part measures. */
export const TLS_LAUNCHES: Partial<Record<PlaneKind, TlsLaunches>> = {
  haproxy: {
    pushed: (binary, dir) => haproxyLaunch(binary, dir),
    files: (binary, dir, view) => haproxyLaunch(binary, dir, { certificatesFrom: view }),
  },
  nginx: {
    pushed: (binary, dir) => nginxLaunch(binary, dir),
    files: (binary, dir, view) =>
      nginxLaunch(binary, dir, { certificatesFrom: { certificates: certificateEntries(view) } }),
  },
  caddy: {
    pushed: (binary, dir) => caddyLaunch(binary, dir),
    files: (binary, dir, view) =>
      caddyLaunch(binary, dir, {
        certificatesFrom: { dir: `${dir}/certificates`, entries: certificateEntries(view) },
      }),
  },
};
