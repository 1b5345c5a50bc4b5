import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it, vi } from "vitest";
import { startEnvtest } from "../src/index.ts";
import { KUBECTL, kubectlOk, kubectlSession, kubectlWorkspace, SETTLE } from "./helpers.ts";

const session = kubectlSession();

async function ok(args: string[]) {
  return (await kubectlOk(session.ws, args)).stdout;
}
function text(s: string | undefined) {
  return Buffer.from(s ?? "", "base64").toString("utf8");
}
function table(out: string) {
  return out
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/));
}

describe("kubectl 1.32 against envtest", () => {
  it("creates a generic secret from literals (a protobuf body) and reads it back", async () => {
    expect(
      await ok([
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=user=admin",
        "--from-literal=password=s3cret",
      ]),
    ).toBe("secret/db created\n");
    const s = session.env.get("default", "db");
    expect(text(s?.data?.user)).toBe("admin");
    expect(text(s?.data?.password)).toBe("s3cret");
    const create = session.env.requests.entries().find((e) => e.verb === "create");
    expect(create?.contentType).toBe("application/vnd.kubernetes.protobuf");
    const json = JSON.parse(await ok(["get", "secret", "db", "-o", "json"])) as {
      data: Record<string, string>;
    };
    expect(text(json.data.password)).toBe("s3cret");
  });

  it("is told apart by the client its kubeconfig's token names (client-go sends it over https)", async () => {
    const tls = await startEnvtest({ https: true });
    const fleet = await kubectlWorkspace(tls, "replica-3");
    try {
      expect(tls.https).toBe(true);
      expect((await fleet.run(["get", "secrets", "-n", "default"])).code).toBe(0);
      const lists = tls.requests.entries().filter((e) => e.verb === "list");
      expect(lists.map((e) => e.client)).toEqual(["replica-3"]);
    } finally {
      await fleet.cleanup();
      await tls.close();
    }
    await ok(["get", "secrets", "-n", "default"]);
    const plain = session.env.requests.entries().filter((e) => e.verb === "list");
    expect(plain.map((e) => e.client)).toEqual([expect.stringMatching(/^kubectl\/v1\.32/)]);
  });

  it("lists secrets in every namespace as a table", async () => {
    session.env.apply({ namespace: "tenant-a", name: "one", data: { k: "v" } });
    session.env.apply({ namespace: "tenant-b", name: "two", type: "example.com/custom" });
    const rows = table(await ok(["get", "secrets", "-A"]));
    expect(rows.map((r) => r.slice(0, 4))).toEqual([
      ["NAMESPACE", "NAME", "TYPE", "DATA"],
      ["tenant-a", "one", "Opaque", "1"],
      ["tenant-b", "two", "example.com/custom", "0"],
    ]);
  });

  it("filters with -l and --field-selector, and reports an unsupported field selector", async () => {
    session.env.apply({ namespace: "default", name: "web", labels: { app: "web" } });
    session.env.apply({ namespace: "default", name: "api", labels: { app: "api" } });
    expect(table(await ok(["get", "secrets", "-l", "app=web", "-o", "name"]))).toEqual([
      ["secret/web"],
    ]);
    expect(table(await ok(["get", "secrets", "-l", "app in (web,api)", "-o", "name"]))).toEqual([
      ["secret/api"],
      ["secret/web"],
    ]);
    expect(
      table(await ok(["get", "secrets", "--field-selector", "metadata.name=api", "-o", "name"])),
    ).toEqual([["secret/api"]]);
    const bad = await session.ws.run(["get", "secrets", "--field-selector", "spec.foo=bar"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("field label not supported: spec.foo");
  });

  it("watches with get -w --output-watch-events and sees ADDED, MODIFIED and DELETED", async () => {
    session.env.apply({ namespace: "default", name: "before" });
    const child = spawn(
      KUBECTL,
      [...session.ws.base, "get", "secrets", "-w", "--output-watch-events"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on("line", (l) => lines.push(l));
    try {
      await vi.waitFor(
        () => expect(lines).toContainEqual(expect.stringMatching(/^ADDED\s+before\b/)),
        {
          ...SETTLE,
          timeout: 10_000,
        },
      );
      await vi.waitFor(() => expect(session.env.openWatches).toBe(1), SETTLE);
      session.env.apply({ namespace: "default", name: "live", data: { v: "1" } });
      session.env.apply({ namespace: "default", name: "live", data: { v: "2" } });
      session.env.delete("default", "live");
      await vi.waitFor(
        () => expect(lines).toContainEqual(expect.stringMatching(/^DELETED\s+live\b/)),
        {
          ...SETTLE,
          timeout: 10_000,
        },
      );
      expect(lines.map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual([
        "EVENT NAME",
        "ADDED before",
        "ADDED live",
        "MODIFIED live",
        "DELETED live",
      ]);
    } finally {
      child.kill();
    }
  });

  it("applies client-side twice: creates, then patches changed data with the last-applied annotation", async () => {
    const file = join(session.ws.dir, "secret.yaml");
    const manifest = (password: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  labels:\n    app: demo\nstringData:\n  password: ${password}\n`;
    await writeFile(file, manifest("one"));
    expect(await ok(["apply", "-f", file])).toBe("secret/app created\n");
    await writeFile(file, manifest("two"));
    expect(await ok(["apply", "-f", file])).toBe("secret/app configured\n");
    const rv = session.env.get("default", "app")?.metadata.resourceVersion;
    // stringData never comes back, so kubectl always sends it again (and says "configured", as
    // against a real cluster); the write changes nothing, so the resourceVersion stays.
    await ok(["apply", "-f", file]);
    const s = session.env.get("default", "app");
    expect(s?.metadata.resourceVersion).toBe(rv);
    expect(text(s?.data?.password)).toBe("two");
    const lastApplied = JSON.parse(
      s?.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"] ?? "{}",
    );
    expect(lastApplied).toMatchObject({ kind: "Secret", stringData: { password: "two" } });
    expect(session.env.requests.entries().find((e) => e.verb === "patch")?.contentType).toBe(
      "application/strategic-merge-patch+json",
    );
  });

  it("applies server-side, records the kubectl field manager, and updates on a second apply", async () => {
    const file = join(session.ws.dir, "ssa.yaml");
    await writeFile(
      file,
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa\ndata:\n  k: djE=\n",
    );
    expect(await ok(["apply", "--server-side", "-f", file])).toBe(
      "secret/ssa serverside-applied\n",
    );
    await writeFile(
      file,
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa\ndata:\n  k: djI=\n",
    );
    expect(await ok(["apply", "--server-side", "-f", file])).toBe(
      "secret/ssa serverside-applied\n",
    );
    const s = session.env.get("default", "ssa");
    expect(s?.data).toEqual({ k: "djI=" });
    expect(s?.metadata.managedFields?.map((m) => `${m.manager}/${m.operation}`)).toEqual([
      "kubectl/Apply",
    ]);
  });

  it("labels and deletes a secret", async () => {
    session.env.apply({ namespace: "default", name: "tmp" });
    expect(await ok(["label", "secret", "tmp", "tier=gold"])).toBe("secret/tmp labeled\n");
    expect(session.env.get("default", "tmp")?.metadata.labels).toEqual({ tier: "gold" });
    expect(await ok(["delete", "secret", "tmp"])).toBe('secret "tmp" deleted\n');
    expect(session.env.get("default", "tmp")).toBeUndefined();
    const again = await session.ws.run(["delete", "secret", "tmp"]);
    expect(again.stderr).toContain('secrets "tmp" not found');
  });

  it("creates, applies, labels, lists and gets namespaces", async () => {
    session.env.apply({ namespace: "tenant-a", name: "x" });
    expect(await ok(["create", "namespace", "made"])).toBe("namespace/made created\n");
    const file = join(session.ws.dir, "ns.yaml");
    await writeFile(
      file,
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: applied\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: inside\n  namespace: applied\ndata:\n  k: dg==\n",
    );
    expect(await ok(["apply", "-f", file])).toBe(
      "namespace/applied created\nsecret/inside created\n",
    );
    expect(await ok(["apply", "-f", file])).toBe(
      "namespace/applied unchanged\nsecret/inside unchanged\n",
    );
    expect(await ok(["apply", "--server-side", "-f", file])).toBe(
      "namespace/applied serverside-applied\nsecret/inside serverside-applied\n",
    );
    expect(await ok(["label", "namespace", "made", "team=a"])).toBe("namespace/made labeled\n");
    expect(table(await ok(["get", "ns", "-o", "name"]))).toEqual([
      ["namespace/applied"],
      ["namespace/default"],
      ["namespace/kube-node-lease"],
      ["namespace/kube-public"],
      ["namespace/kube-system"],
      ["namespace/made"],
      ["namespace/tenant-a"],
    ]);
    expect(table(await ok(["get", "ns", "made", "--show-labels"]))[1]).toEqual([
      "made",
      "Active",
      expect.stringMatching(/^\d+s$/),
      "kubernetes.io/metadata.name=made,team=a",
    ]);
  });
});
