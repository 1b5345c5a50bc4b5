import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { parseKey, readKeyFile, StateKey } from "../../src/state/key.ts";
import { scratchPerTest } from "./fixtures.ts";

// The command the README shows to create the key Secret.
const KEY_COMMAND =
  "kubectl create secret generic replica-mirror-state-key --from-file=key=<(head -c 32 /dev/urandom)";

const raw = randomBytes(32);
const idOf = (bytes: Buffer): string => new StateKey(bytes).id;

describe("parseKey", () => {
  it.each([
    ["32 raw bytes", raw],
    ["64 hex characters", Buffer.from(raw.toString("hex"))],
    ["64 hex characters and a newline", Buffer.from(`${raw.toString("hex")}\n`)],
    [
      "64 upper-case hex characters and CRLF",
      Buffer.from(`${raw.toString("hex").toUpperCase()}\r\n`),
    ],
    ["base64", Buffer.from(raw.toString("base64"))],
    [
      "base64 and a newline (`head -c 32 /dev/urandom | base64`)",
      Buffer.from(`${raw.toString("base64")}\n`),
    ],
    ["base64 without its padding", Buffer.from(raw.toString("base64").replace(/=$/, ""))],
  ])("accepts %s as the same key", (_, content) => {
    const key = parseKey(content);
    expect(key.ok && key.value.id).toBe(idOf(raw));
    expect(key.ok && key.value.bytes().equals(raw)).toBe(true);
  });

  it("accepts 32 raw bytes even when the last is a newline", () => {
    const bytes = Buffer.concat([randomBytes(31), Buffer.from("\n")]);
    expect(parseKey(bytes).ok).toBe(true);
  });

  it.each([
    ["an empty file", Buffer.alloc(0), "holds 0 bytes that are not a key"],
    ["31 raw bytes", randomBytes(31), "holds 31 bytes that are not a key"],
    ["33 raw bytes", randomBytes(33), "holds 33 bytes that are not a key"],
    ["63 hex characters", Buffer.from(raw.toString("hex").slice(1)), "holds 63 bytes"],
    ["hex with two newlines", Buffer.from(`${raw.toString("hex")}\n\n`), "holds 66 bytes"],
    ["base64 of 31 bytes", Buffer.from(randomBytes(31).toString("base64")), "holds 44 bytes"],
    ["32 identical bytes", Buffer.alloc(32), "holds 32 identical bytes: not a random key"],
    ["64 zeros in hex", Buffer.from("0".repeat(64)), "holds 32 identical bytes"],
  ])("refuses %s with a message that says why", (_, content, message) => {
    const key = parseKey(content);
    expect(key.ok).toBe(false);
    if (!key.ok) expect(key.error.message).toContain(message);
  });

  it("never quotes the content it refuses", () => {
    const content = Buffer.from(`${randomBytes(30).toString("hex")}\n`);
    const key = parseKey(content);
    expect(key.ok).toBe(false);
    if (!key.ok) expect(key.error.message).not.toContain(content.toString().trim().slice(0, 8));
  });
});

describe("StateKey", () => {
  it("has an id that tells keys apart and is the same for the same bytes", () => {
    const other = randomBytes(32);
    expect(idOf(raw)).toMatch(/^[0-9a-f]{16}$/);
    expect(idOf(Buffer.from(raw))).toBe(idOf(raw));
    expect(idOf(other)).not.toBe(idOf(raw));
  });

  it("shows only its id in JSON, inspect and string interpolation", () => {
    const key = new StateKey(raw);
    const shown = [
      JSON.stringify({ key }),
      inspect(key),
      inspect({ key }, { depth: 5 }),
      `${String(key)}`,
    ];
    for (const text of shown) {
      expect(text).not.toContain(raw.toString("hex"));
      expect(text).not.toContain(raw.toString("base64"));
    }
    expect(JSON.stringify({ key })).toBe(`{"key":"StateKey(${key.id})"}`);
    expect(inspect(key)).toBe(`StateKey(${key.id})`);
  });
});

describe("readKeyFile", () => {
  const scratch = scratchPerTest();

  it("reads the key through the symbolic links of a mounted Secret (key -> ..data/key)", async () => {
    // The kubelet's layout: ..2025_01_01/key, ..data -> ..2025_01_01, key -> ..data/key.
    mkdirSync(join(scratch.dir, "..2025_01_01"));
    writeFileSync(join(scratch.dir, "..2025_01_01", "key"), raw);
    symlinkSync("..2025_01_01", join(scratch.dir, "..data"));
    symlinkSync("..data/key", join(scratch.dir, "key"));
    const key = await readKeyFile(join(scratch.dir, "key"));
    expect(key.ok && key.value.id).toBe(idOf(raw));
  });

  it("accepts the key the README's command creates", async () => {
    const secret = JSON.parse(
      execFileSync("bash", ["-c", `${KEY_COMMAND} --dry-run=client -o json`], { encoding: "utf8" }),
    ) as { data: { key: string } };
    // The kubelet mounts the decoded value as the file `key`.
    const path = join(scratch.dir, "key");
    writeFileSync(path, Buffer.from(secret.data.key, "base64"));
    const key = await readKeyFile(path);
    expect(key.ok).toBe(true);
  });

  it("says the file does not exist", async () => {
    const path = join(scratch.dir, "absent");
    expect(await readKeyFile(path)).toEqual({
      ok: false,
      error: { missing: true, message: `state key file ${path} does not exist` },
    });
  });

  it("says what is wrong with a file that holds no key", async () => {
    const path = join(scratch.dir, "key");
    writeFileSync(path, "change me\n");
    expect(await readKeyFile(path)).toEqual({
      ok: false,
      error: {
        missing: false,
        message: `state key file ${path} holds 10 bytes that are not a key: expected 32 raw bytes, 64 hex characters or base64 of 32 bytes (an optional trailing newline)`,
      },
    });
  });

  it("refuses a file far larger than a key without reading it", async () => {
    const path = join(scratch.dir, "key");
    writeFileSync(path, randomBytes(4096));
    expect(await readKeyFile(path)).toEqual({
      ok: false,
      error: {
        missing: false,
        message: `state key file ${path} holds 4096 bytes, more than the 1024 allowed`,
      },
    });
  });

  it("says a directory is not a key file", async () => {
    const key = await readKeyFile(scratch.dir);
    expect(key).toEqual({
      ok: false,
      error: { missing: false, message: `state key file ${scratch.dir} is not a regular file` },
    });
  });
});
