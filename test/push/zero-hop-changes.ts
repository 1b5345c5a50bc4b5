// What a zero-hop proxy answers after its table changes: a new Registry, a restart, Secret
// changes and credential rotations across App chunks (nginx's overlay, ADR 44), and, for random
// Registries, Secrets, rotations and hosts, exactly what `/v1/route` answers: the `Authorization`
// a request to an App carries being that App's current credential, or the client's own when it
// has none, never another App's. Run by the zero-hop suite.

import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { PUSHED_WITHIN_MS } from "../support/margins.ts";
import { waitUntil } from "../support/wait.ts";
import {
  type AppInput,
  meta,
  registryOf,
  secretData,
  secretsOf,
  snapshotOf,
} from "../support/world.ts";
import type { ZeroHopRequest } from "../support/zero-hop.ts";
import {
  requestHost,
  rotated,
  rotation,
  snapshotOfWorld,
  zeroHopWorld,
} from "../support/zero-hop-arbitraries.ts";
import type { ZeroHopContext } from "./zero-hop-context.ts";
import { secretsFor } from "./zero-hop-world.ts";

const CLIENT_AUTHORIZATION = "Basic Y2xpZW50OnNlY3JldA==";

export function changeCases(c: ZeroHopContext): void {
  describe("with a new Snapshot pushed", () => {
    let snapshot: Snapshot;
    beforeAll(async () => {
      const [blog, news] = c.urls();
      const apps: AppInput[] = [
        { name: "blog", hostnames: ["blog.example.com"], upstream: blog! },
        { name: "news", hostnames: ["news.example.com", "*.news.example.com"], upstream: news! },
      ];
      snapshot = snapshotOf(apps, secretsFor(["blog", "news"]), c.nextRevision());
      await c.pushed(snapshot);
    }, 30_000);

    it("answers from the new table only: nothing of the old one is left", async () => {
      const hosts = [
        "shop.example.com",
        "x.a.example.com",
        "y.example.com",
        "blog.example.com",
        "news.example.com",
        "w.news.example.com",
      ];
      const got = await Promise.all(hosts.map((host) => c.through({ host })));
      expect(got).toEqual(hosts.map((host) => c.expected(snapshot, { host })));
      expect(got.map((a) => a.status)).toEqual([404, 404, 404, 200, 200, 200]);
    });

    it("gets its table back within one push of a restart", async () => {
      await c.proxy().restart();
      const restarted = Date.now();
      const got = await waitUntil(
        async () => {
          const a = await c.through({ host: "news.example.com" });
          return a.status === 200 && a;
        },
        { timeoutMs: 5_000, intervalMs: 10, what: `${c.name} to route again after its restart` },
      );
      const elapsed = Date.now() - restarted;
      expect({ answer: got, withinAPush: elapsed < PUSHED_WITHIN_MS }).toEqual({
        answer: c.expected(snapshot, { host: "news.example.com" }),
        withinAPush: true,
      });
    }, 30_000);
  });

  it("answers every Secret change and rotation as from the whole table, across App chunks and a restart", async () => {
    // Three chunks of Apps (64 each), every third with a credential: nginx pushes the changed
    // ones only while the hostnames stay the same, and the whole table after its restart.
    const apps: AppInput[] = Array.from({ length: 150 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`, `*.w${i}.example.com`],
      upstream: c.urls()[i % 2]!,
      ...(i % 3 === 0 ? { credential: { prefix: "Bearer " } } : {}),
    }));
    const values = new Map(apps.map((a) => [`${a.name}-credentials`, `t-${a.name}`]));
    const secrets = () =>
      secretsOf([...values].map(([name, token]) => [`apps/${name}`, secretData({ token })]));
    const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const hosts = ["app-5.example.com", "x.w5.example.com", "app-69.example.com"];
    hosts.push("app-141.example.com", "y.w141.example.com", "app-149.example.com");
    const requests: ZeroHopRequest[] = hosts.flatMap((host) => [
      { host },
      { host, headers: { authorization: CLIENT_AUTHORIZATION } },
    ]);
    let snapshot = build(registryOf(apps), secrets(), at(c.nextRevision()));
    await c.pushed(snapshot);
    const steps: [string, string, boolean][] = [
      ["app-005", "", false],
      ["app-141", "rotated|once a", false],
      ["app-005", "t", false],
      ["app-141", "rotated twice\t{b}", false],
      ["app-149", "", true],
      ["app-069", "x\ry", false],
      ["app-069", "rotated", false],
    ];
    for (const [app, token, restart] of steps) {
      if (restart) await c.proxy().restart();
      values.set(`${app}-credentials`, token);
      const ref = { namespace: "apps", name: `${app}-credentials` };
      snapshot = rebuildForSecrets(snapshot, [ref], secrets(), at(c.nextRevision()));
      await c.pushed(snapshot);
      const got = await Promise.all(requests.map((r) => c.through(r)));
      expect({ app, got }).toEqual({ app, got: requests.map((r) => c.expected(snapshot, r)) });
    }
  }, 60_000);

  it("answers every host as /v1/route answers it, credentials too, for random Registries and rotations", async () => {
    const urls = c.urls();
    const choices = [urls[0]!, `${urls[1]!}/`, `${urls[0]!}/path`, "https://127.0.0.1:1"];
    const request = fc.record({
      host: requestHost,
      authorization: fc.option(fc.constantFrom(CLIENT_AUTHORIZATION, "Bearer client|b"), {
        nil: undefined,
      }),
    });
    const asked = ({ host, authorization }: { host: string; authorization?: string }) =>
      authorization === undefined ? { host } : { host, headers: { authorization } };
    await fc.assert(
      fc.asyncProperty(
        zeroHopWorld(choices),
        fc.array(request, { minLength: 1, maxLength: 15 }),
        fc.array(rotation, { maxLength: 3 * c.changeSteps }),
        async (world, requests, rotations) => {
          let now = { world, snapshot: snapshotOfWorld(world, c.nextRevision()) };
          for (let step = 0; ; step++) {
            const { snapshot } = now;
            await c.pushed(snapshot);
            const got = await Promise.all(requests.map((r) => c.through(asked(r))));
            expect(requests.map((r, i) => ({ step, host: r.host, ...got[i]! }))).toEqual(
              requests.map((r) => ({ step, host: r.host, ...c.expected(snapshot, asked(r)) })),
            );
            // Up to 3 rotations a step, one rebuild after another, pushed once: a Secret change
            // each (with one step, every rotation at once).
            const size = Math.ceil(rotations.length / c.changeSteps);
            const changes = rotations.slice(step * size, (step + 1) * size);
            if (changes.length === 0) break;
            for (const change of changes)
              now = rotated(now.world, now.snapshot, change, c.nextRevision());
          }
        },
      ),
      { numRuns: c.runs },
    );
  }, 180_000);
}
