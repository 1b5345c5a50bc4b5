import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runEnvtest } from "../src/cli.ts";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { DEMO_REGISTRY } from "../src/seed.ts";
import { kubectlWorkspace, requireKubectl } from "./helpers.ts";

describe("runEnvtest", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "envtest-cli-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("starts on 127.0.0.1, seeds the demo, writes the kubeconfig and logs where", async () => {
    const lines: string[] = [];
    const path = join(dir, "kubeconfig");
    const env = await runEnvtest({ seed: "demo", kubeconfigPath: path }, (l) => lines.push(l));
    try {
      expect(env.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines.some((l) => l.includes(env.url))).toBe(true);
      expect(lines.some((l) => l.includes(path))).toBe(true);
      const config = parse(await readFile(path, "utf8")) as {
        clusters: { cluster: { server: string } }[];
        "current-context": string;
      };
      expect(config.clusters[0]?.cluster.server).toBe(env.url);
      expect(config["current-context"]).toBe("envtest");
      const registry = env.get("default", "replica-registry");
      expect(
        JSON.parse(Buffer.from(registry?.data?.["registry.json"] ?? "", "base64").toString()),
      ).toEqual(DEMO_REGISTRY);
      expect(env.get("tenant-a", "shop-credentials")?.data).toHaveProperty("token");
      expect(env.get("tenant-b", "blog-credentials")).toBeUndefined();
    } finally {
      await env.close();
    }
  });

  it("writes the kubeconfig to a fresh temporary directory by default and seeds nothing with --seed none", async () => {
    const lines: string[] = [];
    const env = await runEnvtest({ seed: "none" }, (l) => lines.push(l));
    try {
      const path = /kubeconfig written to (\S+)/.exec(lines.join("\n"))?.[1] ?? "";
      expect(path).toContain(tmpdir());
      expect(await readFile(path, "utf8")).toBe(env.kubeconfig());
      expect(env.state.size).toBe(0);
    } finally {
      await env.close();
    }
  });
});

describe("https", () => {
  let env: Envtest;
  beforeAll(async () => {
    env = await startEnvtest({ https: true });
  });
  afterAll(async () => {
    await env.close();
  });

  it("serves https with a self-signed certificate that kubectl and client-node accept via the kubeconfig", async () => {
    requireKubectl();
    expect(env.https).toBe(true);
    expect(env.url).toMatch(/^https:\/\//);
    env.apply({ namespace: "default", name: "tls-check", data: { k: "v" } });
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig());
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: "default" });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(["tls-check"]);
    const ws = await kubectlWorkspace(env);
    try {
      const r = await ws.run(["get", "secret", "tls-check", "-o", "name"]);
      expect(r.stdout).toBe("secret/tls-check\n");
    } finally {
      await ws.cleanup();
    }
  });
});
