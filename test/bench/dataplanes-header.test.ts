import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeAloneConfig } from "../../bench/dataplanes/configs.ts";
import { fixedAuthorization } from "../../bench/dataplanes/credentials.ts";
import { credentialRuns } from "../../bench/dataplanes/proxies.ts";
import type { PlaneKind } from "../support/data-plane.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The lines of `kind`'s alone configuration that mention Authorization, given `authorization`. */
async function authorizationLines(
  kind: PlaneKind,
  pooled: boolean,
  authorization?: string,
): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-alone-config-"));
  dirs.push(dir);
  await writeAloneConfig(kind, {
    port: 8080,
    dir,
    upstreamPort: 9090,
    pooled,
    ...(authorization === undefined ? {} : { authorization }),
  });
  const file = { nginx: "nginx.conf", caddy: "Caddyfile", haproxy: "haproxy.cfg" }[kind];
  const text = await readFile(join(dir, file), "utf8");
  return text.split("\n").filter((l) => /authorization/i.test(l));
}

describe("the proxy alone with a fixed Authorization", () => {
  it("runs, per size, each mode on and then its baseline with the header, once per baseline", () => {
    expect(credentialRuns("nginx", [40])).toEqual([
      { run: "on", variant: "hop", bytes: 40, name: "nginx hop, 40 B credentials" },
      {
        run: "header",
        variant: "hop",
        baseline: "alone",
        bytes: 40,
        name: "nginx alone, 40 B Authorization",
      },
      { run: "on", variant: "zero-hop", bytes: 40, name: "nginx zero-hop, 40 B credentials" },
      {
        run: "header",
        variant: "zero-hop",
        baseline: "alone-pooled",
        bytes: 40,
        name: "nginx alone-pooled, 40 B Authorization",
      },
    ]);
    expect(credentialRuns("caddy", [40, 1024]).map((r) => r.name)).toEqual([
      "caddy zero-hop, 40 B credentials",
      "caddy alone, 40 B Authorization",
      "caddy zero-hop, 1 KiB credentials",
      "caddy alone, 1 KiB Authorization",
    ]);
    expect(credentialRuns("haproxy", []).map((r) => r.name)).toEqual([]);
  });

  it("is the credential's prefix and a fixed value of the size", () => {
    expect(fixedAuthorization(40)).toBe(`Bearer ${"k".repeat(40)}`);
    expect(fixedAuthorization(1024)).toHaveLength(1031);
  });

  it("sets it on every upstream request in each proxy's alone configurations, and only when asked", async () => {
    const value = fixedAuthorization(40);
    const lines = {
      nginx: await authorizationLines("nginx", false, value),
      "nginx pooled": await authorizationLines("nginx", true, value),
      caddy: await authorizationLines("caddy", false, value),
      haproxy: await authorizationLines("haproxy", false, value),
      without: [
        ...(await authorizationLines("nginx", false)),
        ...(await authorizationLines("nginx", true)),
        ...(await authorizationLines("caddy", false)),
        ...(await authorizationLines("haproxy", false)),
      ],
    };
    expect(lines).toEqual({
      nginx: [`      proxy_set_header Authorization "${value}";`],
      "nginx pooled": [`    proxy_set_header Authorization "${value}";`],
      caddy: [`\t\theader_up Authorization "${value}"`],
      haproxy: [`  http-request set-header authorization "${value}"`],
      without: [],
    });
  });

  it("joins an nginx value longer than one parameter holds from a map per part", async () => {
    const value = fixedAuthorization(5000);
    expect(await authorizationLines("nginx", true, value)).toEqual([
      `  map $host $bench_authorization_0 { default "${value.slice(0, 2048)}"; }`,
      `  map $host $bench_authorization_1 { default "${value.slice(2048, 4096)}"; }`,
      `  map $host $bench_authorization_2 { default "${value.slice(4096)}"; }`,
      `    proxy_set_header Authorization "$bench_authorization_0$bench_authorization_1$bench_authorization_2";`,
    ]);
  });

  it("refuses a value the configurations would have to quote", async () => {
    await expect(authorizationLines("haproxy", false, 'Bearer "x"')).rejects.toThrow(
      "must not need quoting",
    );
  });
});
