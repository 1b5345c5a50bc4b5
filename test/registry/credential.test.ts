// An App entry's `credential` (ADR 53): read with its prefix (empty by default), and an entry whose
// prefix breaks the rule refused alone, the reason naming the rule and never the prefix.

import { describe, expect, it } from "vitest";
import { parseRegistry } from "../../src/registry/parse.ts";
import { registryDoc } from "../support/world.ts";

const opts = { defaultNamespace: "platform" };
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("parseRegistry, an App's credential", () => {
  it("reads an App's credential, its prefix defaulting to empty, and refuses a bad prefix alone", () => {
    const doc = registryDoc([
      { name: "bearer", hostnames: ["bearer.example"], credential: { prefix: "Bearer " } },
      { name: "bare", hostnames: ["bare.example"], credential: {} },
      { name: "none", hostnames: ["none.example"] },
      { name: "max", hostnames: ["max.example"], credential: { prefix: "~".repeat(64) } },
      { name: "long", hostnames: ["long.example"], credential: { prefix: "x".repeat(65) } },
      { name: "crlf", hostnames: ["crlf.example"], credential: { prefix: "Bearer\r\nX: y" } },
      { name: "tab", hostnames: ["tab.example"], credential: { prefix: "Bearer\t" } },
      { name: "utf8", hostnames: ["utf8.example"], credential: { prefix: "Bärer " } },
      { name: "null", hostnames: ["null.example"], extra: { credential: null } },
      { name: "num", hostnames: ["num.example"], credential: { prefix: 7 as unknown as string } },
    ]);
    const parsed = parseRegistry(bytes(doc), opts);
    const visible = "credential.prefix: must be visible ASCII (0x21-0x7e) or spaces";
    expect(parsed.ok && parsed.value).toEqual({
      registry: {
        apps: ["bearer", "bare", "none", "max"].map((name) => ({
          name,
          hostnames: [`${name}.example`],
          secretRef: { namespace: "platform", name: `${name}-credentials`, key: "token" },
          upstream: null,
          credential:
            name === "none"
              ? null
              : { prefix: name === "bearer" ? "Bearer " : name === "max" ? "~".repeat(64) : "" },
          tls: null,
        })),
      },
      refused: [
        { index: 4, name: "long", reason: "credential.prefix: at most 64 characters" },
        { index: 5, name: "crlf", reason: visible },
        { index: 6, name: "tab", reason: visible },
        { index: 7, name: "utf8", reason: visible },
        {
          index: 8,
          name: "null",
          reason: "credential: Invalid input: expected object, received null",
        },
        {
          index: 9,
          name: "num",
          reason: "credential.prefix: Invalid input: expected string, received number",
        },
      ],
    });
  });
});
