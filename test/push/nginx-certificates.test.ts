// Each App's certificate served by SNI through the real nginx and the shipped zero-hop nginx.conf
// (ADR 56): exact and wildcard names, the default certificate otherwise, a rotation as one PATCH
// served on the next handshake with no handshake failing meanwhile, a certificate added and
// removed by PATCH and a removed App's gone (nginx's digest following each), and requests over
// TLS answered as plain ones. Failures and restarts: nginx-certificates-safety.test.ts.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { askOverTls } from "../support/tls-client.ts";
import { findTool } from "../support/tools.ts";
import { ask } from "../support/zero-hop.ts";
import { handshake } from "./nginx-certificates-tls.ts";
import {
  A_NAMES,
  type CertificateWorld,
  startCertificateWorld,
} from "./nginx-certificates-world.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);
const ROTATIONS = 50;
const PUT = "PUT /replica-mirror/table";
const PATCH = "PATCH /replica-mirror/table";

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("nginx's certificates by SNI", () => {
  let w: CertificateWorld;
  // The Snapshot nginx holds, from test to test.
  let held: Snapshot;

  beforeAll(async () => {
    w = await startCertificateWorld(nginx.path!);
    for (let i = 2; i <= ROTATIONS + 2; i++) w.named(`a${i}`, A_NAMES);
    held = w.build();
  }, 30_000);

  afterAll(() => w?.close());

  it("serves each App's certificate for its exact and wildcard names, and the default one otherwise", async () => {
    await w.pushed(held);
    expect({
      got: await w.served([
        "a.example.com",
        "x.a.example.com",
        "X.A.Example.COM",
        "y.x.a.example.com",
        "b.example.com",
        "c.example.com",
        "unknown.example.com",
        undefined,
      ]),
      holds: await w.holds(held),
    }).toEqual({
      got: ["a1", "a1", "a1", "default", "b1", "default", "default", "default"],
      holds: true,
    });
  });

  it("sends a rotation as one PATCH and serves it on the next handshake", async () => {
    held = w.rotated(held, "a", "a2");
    await w.pushed(held);
    expect({
      pushes: w.pushes().slice(-2),
      got: await w.served(["a.example.com", "x.a.example.com", "b.example.com"]),
      holds: await w.holds(held),
    }).toEqual({ pushes: [PUT, PATCH], got: ["a2", "a2", "b1"], holds: true });
  });

  it("answers a request over TLS as it answers it over plain HTTP", async () => {
    const hosts = ["a.example.com", "x.a.example.com", "c.example.com", "unknown.example.com"];
    const plain = await Promise.all(hosts.map((host) => ask(w.proxy.port, { host })));
    const overTls = await Promise.all(hosts.map((h) => askOverTls(w.proxy.tlsPort!, h, h)));
    expect({ statuses: overTls.map((a) => a.status), answers: overTls }).toEqual({
      statuses: [200, 200, 200, 404],
      answers: plain,
    });
  });

  it("serves no removed App's certificate", async () => {
    w.tlsOf.delete("b");
    held = w.build({ without: ["b"] });
    await w.pushed(held);
    expect({
      got: await w.served(["a.example.com", "b.example.com"]),
      holds: await w.holds(held),
    }).toEqual({ got: ["a2", "default"], holds: true });
  });

  it("adds and removes an App's certificate by PATCH, and nginx's digest follows", async () => {
    // b again, its TLS Secret absent: no certificate; then the Secret; then none, past expiry.
    const without = w.build();
    await w.pushed(without);
    const added = w.rotated(without, "b", "b1");
    await w.pushed(added);
    const whenAdded = { got: await w.served(["b.example.com"]), holds: await w.holds(added) };
    held = w.rotated(added, "b", null, Date.now() + 60 * 86_400_000);
    await w.pushed(held);
    expect({
      pushes: w.pushes().slice(-3),
      whenAdded,
      whenRemoved: {
        got: await w.served(["b.example.com", "a.example.com"]),
        holds: await w.holds(held),
      },
    }).toEqual({
      pushes: [PUT, PATCH, PATCH],
      whenAdded: { got: ["b1"], holds: true },
      whenRemoved: { got: ["default", "a2"], holds: true },
    });
  });

  it(`fails no handshake during ${ROTATIONS} rotations under a loop of handshakes`, async () => {
    let rotating = true;
    const seen: string[] = [];
    const loop = async () => {
      while (rotating) seen.push(await handshake(w.proxy.tlsPort!, "x.a.example.com", w.names));
    };
    const loops = [loop(), loop()];
    for (let i = 3; i < ROTATIONS + 3; i++) {
      held = w.rotated(held, "a", `a${i}`);
      await w.pushed(held);
      await new Promise((r) => setTimeout(r, 20));
    }
    rotating = false;
    await Promise.all(loops);
    const failed = seen.filter((s) => !/^a\d+$/.test(s));
    console.log(
      `nginx: ${seen.length} handshakes during ${ROTATIONS} rotations, ${failed.length} failed`,
    );
    expect({
      failed,
      last: await w.served(["a.example.com"]),
      patches: w
        .pushes()
        .slice(-ROTATIONS)
        .filter((p) => p === PATCH).length,
      holds: await w.holds(held),
    }).toEqual({ failed: [], last: [`a${ROTATIONS + 2}`], patches: ROTATIONS, holds: true });
  }, 30_000);
});
