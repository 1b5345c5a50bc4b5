// The bench's comparison launch (test/support/zero-hop-proxies.ts, `certificatesFrom`): HAProxy
// loading a view's certificates from files serves what a push of that view serves.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate } from "../support/certificates.ts";
import { release } from "../support/release.ts";
import { fingerprintOf, servedFingerprint } from "../support/tls-client.ts";
import { findTool } from "../support/tools.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { servedSnapshot, tlsApp } from "./haproxy-certificates-world.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);

describe.skipIf(haproxy.path === undefined)("HAProxy certificates from files", () => {
  let dirs: string[];
  let proxies: ZeroHopProxy[];
  let a: TestCertificate;
  let view: Snapshot;

  beforeAll(async () => {
    a = makeCertificate({ names: ["a.example.com", "*.a.example.com"] });
    const apps = [tlsApp("a", ["a.example.com", "*.a.example.com"], "http://127.0.0.1:9")];
    view = servedSnapshot(apps, { a: { cert: a, version: "1" } }, 1);
    dirs = await Promise.all(["files", "pushed"].map((k) => mkdtemp(join(tmpdir(), `rm-${k}-`))));
    proxies = [
      await startZeroHopHaproxy(haproxy.path!, dirs[0]!, { certificatesFrom: view }),
      await startZeroHopHaproxy(haproxy.path!, dirs[1]!),
    ];
  }, 30_000);

  afterAll(() => release(...(proxies ?? []), ...(dirs ?? [])));

  it("serves the view's certificates for the names a push of the view serves them for", async () => {
    const pushed = await Promise.all(proxies.map((p) => p.target.push(view)));
    const names = ["a.example.com", "x.a.example.com", "nope.example.com"];
    const served = await Promise.all(
      proxies.map((p) => Promise.all(names.map((n) => servedFingerprint(p.tlsPort!, n)))),
    );
    expect({ pushed, files: served[0]!.slice(0, 2), same: served[0]!.slice(0, 2) }).toEqual({
      pushed: [
        { ok: true, value: undefined },
        { ok: true, value: undefined },
      ],
      files: [fingerprintOf(a.crt), fingerprintOf(a.crt)],
      same: served[1]!.slice(0, 2),
    });
    expect(served[0]![2]).not.toBe(fingerprintOf(a.crt));
  });
});
