/**
 * The proof against real Go code: kubectl 1.32's typed client asks for protobuf first when it
 * creates and describes Secrets, so it decodes envtest's protobuf Secrets and Status errors with
 * client-go's own decoders.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kubectlOk, kubectlSession } from "./helpers.ts";

const session = kubectlSession();

const ok = (args: string[]) => kubectlOk(session.ws, args);

/**
 * kubectl -v=8 logs each response's status, then its headers, before the next request's line: a
 * response with `code` was protobuf.
 */
function answeredProtobuf(code: number): RegExp {
  const sameResponse = "(?:(?!.*(?:Response Status|https?://)).*\n)*?";
  return new RegExp(
    `Response Status: ${code} [A-Za-z ]+ in \\d+ milliseconds\n${sameResponse}.*Content-Type: application/vnd\\.kubernetes\\.protobuf\n`,
  );
}

describe("kubectl 1.32 decodes envtest's protobuf answers", () => {
  it("create secret -o json prints, from the protobuf answer, what get -o json prints", async () => {
    const blob = join(session.ws.dir, "blob");
    await writeFile(blob, Uint8Array.from([0x00, 0x80, 0xff, 0xc3, 0x28, 0x0a]));
    const created = await ok([
      "create",
      "secret",
      "generic",
      "db",
      "--from-literal=user=admin",
      "--from-literal=note=ü and 中文",
      "--from-literal=empty=",
      `--from-file=blob=${blob}`,
      "--type=example.com/custom",
      "-o",
      "json",
      "--show-managed-fields",
      "-v=8",
    ]);
    expect(created.stderr).toMatch(answeredProtobuf(201));
    const got = await ok(["get", "secret", "db", "-o", "json", "--show-managed-fields"]);
    const stored = session.env.get("default", "db");
    expect(stored?.metadata.managedFields).toHaveLength(1);
    expect(JSON.parse(created.stdout)).toEqual(JSON.parse(got.stdout));
    expect(JSON.parse(created.stdout)).toEqual(stored);
    expect(Buffer.from(stored?.data?.blob ?? "", "base64")).toEqual(
      Buffer.from([0x00, 0x80, 0xff, 0xc3, 0x28, 0x0a]),
    );
  });

  it("describe reads the Secret from a protobuf GET", async () => {
    session.env.apply({
      namespace: "default",
      name: "shown",
      labels: { app: "web", tier: "gold" },
      annotations: { "example.com/note": "hi" },
      data: { bin: Uint8Array.from([0x80, 0x81, 0x82]), text: "hello" },
      type: "example.com/custom",
    });
    const r = await ok(["describe", "secret", "shown", "-v=8"]);
    expect(r.stderr).toMatch(answeredProtobuf(200));
    // describe walks the data map in Go's random map order: the Data lines are compared as a set.
    const lines = r.stdout.split("\n");
    const data = lines.indexOf("====") + 1;
    expect([...lines.slice(0, data), ...lines.slice(data, -1).sort(), ...lines.slice(-1)]).toEqual([
      "Name:         shown",
      "Namespace:    default",
      "Labels:       app=web",
      "              tier=gold",
      "Annotations:  example.com/note: hi",
      "",
      "Type:  example.com/custom",
      "",
      "Data",
      "====",
      "bin:   3 bytes",
      "text:  5 bytes",
      "",
    ]);
  });

  it("reads protobuf Status errors on create: 409, 422, an injected 500, and retries a 429", async () => {
    await ok(["create", "secret", "generic", "db", "--from-literal=a=b"]);
    /** The error kubectl printed (its last line) after decoding a protobuf Status of `code`. */
    const failed = async (name: string, code: number) => {
      const r = await session.ws.run([
        "create",
        "secret",
        "generic",
        name,
        "--from-literal=a=b",
        "-v=8",
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(answeredProtobuf(code));
      return `${r.stderr.trimEnd().split("\n").at(-1)}\n`;
    };
    expect(await failed("db", 409)).toBe(
      'error: failed to create secret secrets "db" already exists\n',
    );
    expect(await failed("Bad_Name", 422)).toBe(
      `error: failed to create secret Secret "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n`,
    );
    session.env.faults.failNext({ verb: "create", count: 1, status: 500 });
    expect(await failed("later", 500)).toBe(
      "error: failed to create secret Internal error occurred: injected fault\n",
    );
    session.env.faults.failNext({ verb: "create", count: 1, status: 429, retryAfterSeconds: 1 });
    await ok(["create", "secret", "generic", "retried", "--from-literal=a=b"]);
    const creates = session.env.requests.entries().filter((e) => e.verb === "create");
    expect(creates.map((e) => e.status)).toEqual([201, 409, 422, 500, 429, 201]);
    expect(session.env.get("default", "retried")).toBeDefined();
  });
});
