import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const dockerfile = readFileSync("Dockerfile", "utf8");
const ignored = readFileSync(".dockerignore", "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "");

describe("Dockerfile", () => {
  it("builds on Node 24 in every stage and runs as a numeric non-root user", () => {
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const image of froms) expect(image).toMatch(/^node:24-/);
    expect(/^USER (\d+):(\d+)$/m.exec(dockerfile)?.slice(1).map(Number)).toEqual([65532, 65532]);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
  });

  it("copies only files that exist and that .dockerignore does not exclude", () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(" "),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true);
      expect(ignored.includes(source.replace(/\/$/, "")), source).toBe(false);
    }
  });

  it("names an entrypoint the build produces, and it runs", async () => {
    const entry = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!) as string[];
    const cmd = JSON.parse(/^CMD (.+)$/m.exec(dockerfile)![1]!) as string[];
    expect(entry[0]).toBe("node");
    expect(cmd).toEqual(["serve"]);
    const dir = await mkdtemp(join(tmpdir(), "replica-mirror-image-"));
    try {
      await run(process.execPath, [
        "node_modules/typescript/bin/tsc",
        "-p",
        "tsconfig.build.json",
        "--outDir",
        join(dir, "dist"),
      ]);
      await copyFile("package.json", join(dir, "package.json"));
      await symlink(join(process.cwd(), "node_modules"), join(dir, "node_modules"));
      const version = await run(process.execPath, [entry[1]!, "--version"], { cwd: dir });
      expect(version.stdout.trim()).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
      const help = await run(process.execPath, [entry[1]!, "serve", "--help"], { cwd: dir });
      expect(help.stdout).toContain("--registry-name NAME");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
