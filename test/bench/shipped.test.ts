import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cpuMicros, rssBytes } from "../../bench/proc-stats.ts";
import { shippedCommand } from "../../bench/shipped.ts";

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
    expect(command.env.NODE_ENV).toBe("production");
    expect(command.compileCache).toBe(true);
  });

  it("reads resident memory and CPU of a process from /proc", () => {
    const rss = rssBytes(process.pid);
    expect(Math.abs(rss - process.memoryUsage.rss()) / rss).toBeLessThan(0.2);
    const cpu = process.cpuUsage();
    expect(Math.abs(cpuMicros(process.pid) - (cpu.user + cpu.system))).toBeLessThan(50_000);
  });
});
