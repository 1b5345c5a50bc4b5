import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { call, failureStatus } from "./helpers.ts";

let env: Envtest;
beforeAll(async () => {
  env = await startEnvtest();
});
afterAll(async () => {
  await env.close();
});

function create(namespace: string, body: object) {
  return call(env, "POST", `/api/v1/namespaces/${namespace}/secrets`, body);
}

const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe("422 Invalid", () => {
  it("rejects a Secret name that is not a DNS-1123 subdomain, with the real Status shape", async () => {
    const res = await create("default", { metadata: { name: "Bad_Name" } });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Secret "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`,
      reason: "Invalid",
      details: {
        name: "Bad_Name",
        kind: "Secret",
        causes: [
          {
            reason: "FieldValueInvalid",
            message: `Invalid value: "Bad_Name": ${SUBDOMAIN}`,
            field: "metadata.name",
          },
        ],
      },
      code: 422,
    });
  });

  it("requires a name or generateName", async () => {
    const res = await create("default", { metadata: {} });
    expect((res.json as { message: string }).message).toBe(
      'Secret "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it("rejects a namespace that is not a DNS-1123 label", async () => {
    const res = await create("Not.A.Label", { metadata: { name: "ok" } });
    expect(res.status).toBe(422);
    expect(
      (res.json as { details: { causes: { field: string }[] } }).details.causes[0]?.field,
    ).toBe("metadata.namespace");
  });

  it("rejects data keys outside [-._a-zA-Z0-9]+ and longer than 253", async () => {
    const res = await create("default", {
      metadata: { name: "keys" },
      data: { "bad key": "", ["k".repeat(254)]: "" },
    });
    expect(res.status).toBe(422);
    const causes = (res.json as { details: { causes: { field: string; message: string }[] } })
      .details.causes;
    expect(causes).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "data[bad key]",
        message:
          "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      },
      {
        reason: "FieldValueInvalid",
        field: `data[${"k".repeat(254)}]`,
        message: `Invalid value: "${"k".repeat(254)}": must be no more than 253 characters`,
      },
    ]);
  });

  it("rejects more than 1 MiB of data as Too long, and accepts exactly 1 MiB", async () => {
    const half = Buffer.alloc(512 * 1024, 1).toString("base64");
    const over = await create("default", {
      metadata: { name: "big" },
      data: { a: half, b: half, c: "AA==" },
    });
    expect(over.status).toBe(422);
    const tooLong = "Too long: must have at most 1048576 bytes";
    expect(over.json).toEqual(
      failureStatus(422, "Invalid", `Secret "big" is invalid: data: ${tooLong}`, {
        name: "big",
        kind: "Secret",
        causes: [{ reason: "FieldValueTooLong", message: tooLong, field: "data" }],
      }),
    );
    const exact = await create("default", {
      metadata: { name: "exact" },
      data: { a: half, b: half },
    });
    expect(exact.status).toBe(201);
  });

  it("answers 413 for a body over the 3 MiB request limit", async () => {
    const huge = Buffer.alloc(3 * 1024 * 1024, 1).toString("base64");
    const res = await create("default", { metadata: { name: "huge" }, data: { a: huge } });
    expect(res.status).toBe(413);
    expect((res.json as { reason: string }).reason).toBe("RequestEntityTooLarge");
  });

  it("rejects invalid label keys and values", async () => {
    const res = await create("default", {
      metadata: { name: "labels", labels: { "bad key": "v", ok: "bad value" } },
    });
    expect(res.status).toBe(422);
    expect(
      (res.json as { details: { causes: { field: string }[] } }).details.causes.map((c) => c.field),
    ).toEqual(["metadata.labels", "metadata.labels"]);
  });

  it("lists several errors in one message, bracketed as the real server does", async () => {
    const res = await create("default", { metadata: { name: "UPPER" }, data: { "a b": "" } });
    expect((res.json as { message: string }).message).toMatch(
      /^Secret "UPPER" is invalid: \[metadata\.name: .*, data\[a b\]: .*\]$/,
    );
  });

  it("checks the keys a typed Secret requires", async () => {
    const res = await create("default", {
      metadata: { name: "tls" },
      type: "kubernetes.io/tls",
      data: { "tls.crt": "" },
    });
    expect((res.json as { message: string }).message).toBe(
      'Secret "tls" is invalid: data[tls.key]: Required value',
    );
  });
});
