// `registry validate FILE` in process: what it prints and its exit status, for the rules a
// tenant's entry may break (ADR 48).

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runValidate } from "../../src/cli/validate.ts";
import { type AppInput, registryDoc } from "../support/world.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-validate-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `registry validate` on a document of `apps`: its exit status and every line it printed. */
async function validate(apps: readonly AppInput[], ...flags: string[]) {
  const file = join(dir, "registry.json");
  await writeFile(file, JSON.stringify(registryDoc(apps)));
  const lines: string[] = [];
  const code = await runValidate([file, ...flags], (l) => lines.push(l));
  return { code, lines: lines.map((l) => l.replace(`${file}: `, "")) };
}

const LOCAL_APPS: AppInput[] = [
  { name: "ops", hostnames: ["ops.example.com"], upstream: "http://127.0.0.1:9090" },
  { name: "metadata", hostnames: ["md.example.com"], upstream: "http://169.254.169.254" },
  { name: "private", hostnames: ["private.example.com"], upstream: "http://10.0.0.12:8080" },
];

describe("registry validate", () => {
  it("exits 1 naming each App whose upstream is a local address", async () => {
    expect(await validate(LOCAL_APPS)).toEqual({
      code: 1,
      lines: [
        "apps[0].upstream: a loopback address is not allowed (--allow-local-upstreams)",
        "apps[1].upstream: a link-local address (169.254.0.0/16, fe80::/10) is not allowed (--allow-local-upstreams)",
      ],
    });
  });

  it("accepts local upstreams with --allow-local-upstreams true, as serve's flag does", async () => {
    expect(await validate(LOCAL_APPS, "--allow-local-upstreams", "true")).toEqual({
      code: 0,
      lines: ["valid: 3 Apps, 3 hostnames"],
    });
    expect(await validate(LOCAL_APPS, "--allow-local-upstreams=false")).toMatchObject({ code: 1 });
    expect(await validate(LOCAL_APPS, "--allow-local-upstreams", "yes")).toEqual({
      code: 2,
      lines: [
        "usage: replica-mirror registry validate FILE [--namespace NS] [--allow-local-upstreams true|false]",
      ],
    });
  });

  it("exits 1 naming each hostname that is an IPv4 address, under localhost, or a one-label wildcard", async () => {
    const apps: AppInput[] = [
      { name: "ip", hostnames: ["10.0.0.12"] },
      { name: "local", hostnames: ["localhost"] },
      { name: "tld", hostnames: ["ok.example.com", "*.com"] },
    ];
    expect(await validate(apps)).toEqual({
      code: 1,
      lines: [
        "apps[0].hostnames[0]: its last label is a number, so URL parsers read it as an IPv4 address: not a hostname",
        "apps[1].hostnames[0]: localhost and the names under it are not allowed",
        "apps[2].hostnames[1]: a wildcard must cover at least two labels, as in *.example.com",
      ],
    });
  });

  it("exits 1 naming each App whose credential prefix breaks the rule, and counts the Apps with one", async () => {
    const apps: AppInput[] = [
      { name: "bearer", hostnames: ["bearer.example.com"], credential: { prefix: "Bearer " } },
      { name: "plain", hostnames: ["plain.example.com"] },
    ];
    expect(await validate(apps)).toEqual({
      code: 0,
      lines: [
        "valid: 2 Apps, 2 hostnames; 1 App sends its Secret as Authorization (--serve-credentials)",
      ],
    });
    const bad: AppInput[] = [
      ...apps,
      { name: "crlf", hostnames: ["crlf.example.com"], credential: { prefix: "Bearer\r\n" } },
      { name: "long", hostnames: ["long.example.com"], credential: { prefix: "B".repeat(65) } },
    ];
    expect(await validate(bad)).toEqual({
      code: 1,
      lines: [
        "apps[2].credential.prefix: must be visible ASCII (0x21-0x7e) or spaces",
        "apps[3].credential.prefix: at most 64 characters",
      ],
    });
  });

  it("exits 1 naming each App whose tls Secret is badly named, and counts the Apps with tls", async () => {
    const apps: AppInput[] = [
      { name: "shop", hostnames: ["shop.example.com"], tls: "shop-tls" },
      {
        name: "blog",
        hostnames: ["blog.example.com"],
        tls: { namespace: "web", name: "blog-tls" },
      },
      { name: "plain", hostnames: ["plain.example.com"] },
    ];
    expect(await validate(apps)).toEqual({
      code: 0,
      lines: [
        "valid: 3 Apps, 3 hostnames; 2 Apps have their own certificate (--serve-certificates)",
      ],
    });
    const bad: AppInput[] = [
      ...apps,
      { name: "upper", hostnames: ["upper.example.com"], tls: "Shop_TLS" },
      { name: "ns", hostnames: ["ns.example.com"], tls: { namespace: "Web", name: "ns-tls" } },
    ];
    expect(await validate(bad)).toEqual({
      code: 1,
      lines: [
        "apps[3].tls.secretRef.name: must be a DNS-1123 subdomain",
        "apps[4].tls.secretRef.namespace: must be a DNS-1123 label (lower-case letters, digits, '-')",
      ],
    });
  });
});
