import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PER_HOST, startBaseline } from "../../bench/baselines.ts";
import { answersFor, hostsFor, snapshotFor } from "../../bench/fixtures.ts";
import { waitForStatus } from "../../bench/http-probe.ts";
import { writeAnswersFile } from "../../bench/load.ts";
import { cpuMicros, rssBytes } from "../../bench/proc-stats.ts";
import { shippedCommand } from "../../bench/shipped.ts";
import { lookup } from "../../src/snapshot/lookup.ts";
import { get } from "../support/http.ts";

const packageJson = JSON.parse(readFileSync("package.json", "utf8")) as {
  bin: Record<string, string>;
};

describe("the bench starts what the image starts", () => {
  it("reads node's flags, the entry and the ENV from the Dockerfile, the args from the manifest", () => {
    const command = shippedCommand();
    const entrypoint = JSON.parse(
      /^ENTRYPOINT (.+)$/m.exec(readFileSync("Dockerfile", "utf8"))![1]!,
    ) as string[];
    expect(["node", ...command.nodeFlags, command.entry]).toEqual(entrypoint);
    expect(command.entry).toBe(packageJson.bin["replica-mirror"]);
    expect(command.args[0]).toBe("serve");
    expect(command.args.filter((a) => a.startsWith("--listen="))).toHaveLength(1);
    expect(command.env).toEqual({
      NODE_ENV: "production",
      MALLOC_MMAP_THRESHOLD_: "65536",
      MALLOC_TRIM_THRESHOLD_: "65536",
    });
  });

  it("reads resident memory and CPU of a process from /proc", () => {
    const rss = rssBytes(process.pid);
    expect(Math.abs(rss - process.memoryUsage.rss()) / rss).toBeLessThan(0.2);
    const cpu = process.cpuUsage();
    expect(Math.abs(cpuMicros(process.pid) - (cpu.user + cpu.system))).toBeLessThan(50_000);
  });
});

describe("the per-host baseline", () => {
  const APPS = 200;

  it("holds, for every host the load sends, the App the sidecar's lookup finds", () => {
    const snapshot = snapshotFor(APPS);
    const fromLookup = Object.fromEntries(
      hostsFor(APPS).map((host) => {
        const found = lookup(snapshot, host);
        if (found.kind !== "found") return [host, null];
        return [
          host,
          {
            "x-mirror-app": found.app.name,
            "x-mirror-upstream": found.app.upstream,
            "x-mirror-revision": "1",
          },
        ];
      }),
    );
    expect(answersFor(APPS)).toEqual(fromLookup);
  });

  it("answers each host with those headers", async () => {
    const answers = answersFor(APPS);
    const server = await startBaseline(PER_HOST, { nodeFlags: [], args: [writeAnswersFile(APPS)] });
    try {
      await waitForStatus(server.dataPort, "/readyz", 200, 20_000);
      const hosts = ["app-0.example.com", "w10.app-10.example.com", "app-199.example.com"];
      const got = await Promise.all(
        hosts.map(async (host) => {
          const res = await get(server.dataPort, "/v1/route", { host });
          const pick = (k: string) => res.headers[k];
          return {
            status: res.status,
            "x-mirror-app": pick("x-mirror-app"),
            "x-mirror-upstream": pick("x-mirror-upstream"),
            "x-mirror-revision": pick("x-mirror-revision"),
          };
        }),
      );
      expect(got).toEqual(hosts.map((h) => ({ status: 200, ...answers[h] })));
    } finally {
      await server.stop();
    }
  }, 30_000);
});
