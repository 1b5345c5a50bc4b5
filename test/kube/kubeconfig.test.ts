import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type https from "node:https";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LoadedKubeConfig, loadKubeConfig } from "../../src/kube/rest/kubeconfig.ts";
import type { Result } from "../../src/result.ts";
import { kubeconfigYaml } from "../support/api-server-stub.ts";

let dir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubeconfig-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
  return path;
}

/** A fake pod filesystem: <dir>/pod/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}. */
async function serviceAccount(token: string | undefined): Promise<string> {
  const sa = "pod/var/run/secrets/kubernetes.io/serviceaccount";
  await file(`${sa}/ca.crt`, "-----BEGIN CERTIFICATE-----\n");
  await file(`${sa}/namespace`, "mirror-ns\n");
  if (token !== undefined) await file(`${sa}/token`, token);
  return join(dir, "pod");
}

/** What a loaded config resolves to: where it came from, the server, the namespace. */
function summary(loaded: Result<LoadedKubeConfig, { message: string }>) {
  if (!loaded.ok) return { error: loaded.error.message };
  const { kubeConfig, source, namespace } = loaded.value;
  return { source, server: kubeConfig.getCurrentCluster()?.server, namespace };
}

const inClusterEnv = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

describe("loadKubeConfig", () => {
  it("uses an explicit path before anything else", async () => {
    const path = await file(
      "explicit.yaml",
      kubeconfigYaml("https://explicit:6443", "t", "team-a"),
    );
    const env = {
      ...inClusterEnv,
      KUBECONFIG: await file("env.yaml", kubeconfigYaml("https://env:6443", "t")),
    };
    const prefix = await serviceAccount("sa-token");
    expect(summary(loadKubeConfig(path, { env, serviceAccountPrefix: prefix }))).toEqual({
      source: "explicit",
      server: "https://explicit:6443",
      namespace: "team-a",
    });
  });

  it("uses the service account in a pod, with its token and namespace", async () => {
    const prefix = await serviceAccount("sa-token-123");
    const loaded = loadKubeConfig(undefined, { env: inClusterEnv, serviceAccountPrefix: prefix });
    expect(summary(loaded)).toEqual({
      source: "in-cluster",
      server: "https://10.96.0.1:443",
      namespace: "mirror-ns",
    });
    if (!loaded.ok) return;
    const options: https.RequestOptions & { headers?: Record<string, unknown> } = {};
    await loaded.value.kubeConfig.applyToHTTPSOptions(options);
    expect(options.headers?.Authorization).toBe("Bearer sa-token-123");
  });

  it("brackets an IPv6 service host", async () => {
    const prefix = await serviceAccount("t");
    const env = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    expect(summary(loadKubeConfig(undefined, { env, serviceAccountPrefix: prefix })).server).toBe(
      "https://[fd00::1]:443",
    );
  });

  it("ignores KUBERNETES_SERVICE_HOST without a service-account token and falls back to $KUBECONFIG", async () => {
    const prefix = await serviceAccount(undefined);
    const env = {
      ...inClusterEnv,
      KUBECONFIG: await file("env.yaml", kubeconfigYaml("https://env:6443", "t")),
    };
    expect(summary(loadKubeConfig(undefined, { env, serviceAccountPrefix: prefix }))).toEqual({
      source: "env",
      server: "https://env:6443",
      namespace: "ns1",
    });
  });

  it("merges a $KUBECONFIG list with the first file winning, skipping files that do not exist", async () => {
    const first = await file("a.yaml", kubeconfigYaml("https://first:6443", "t", "first-ns"));
    const second = await file("b.yaml", kubeconfigYaml("https://second:6443", "t", "second-ns"));
    const env = { KUBECONFIG: [join(dir, "missing.yaml"), first, second].join(delimiter) };
    const loaded = loadKubeConfig(undefined, { env, home: dir });
    expect(summary(loaded)).toEqual({
      source: "env",
      server: "https://first:6443",
      namespace: "first-ns",
    });
    expect(loaded.ok && loaded.value.paths).toEqual([first, second]);
  });

  it("fails clearly when no file in $KUBECONFIG exists", () => {
    const env = { KUBECONFIG: join(dir, "nope.yaml") };
    expect(summary(loadKubeConfig(undefined, { env, home: dir }))).toEqual({
      error: `none of the files in $KUBECONFIG exist: ${join(dir, "nope.yaml")}`,
    });
  });

  it("falls back to ~/.kube/config", async () => {
    await file("home/.kube/config", kubeconfigYaml("https://home:6443", "t"));
    expect(summary(loadKubeConfig(undefined, { env: {}, home: join(dir, "home") }))).toEqual({
      source: "home",
      server: "https://home:6443",
      namespace: "ns1",
    });
  });

  it("says where it looked when there is no kubeconfig at all", () => {
    const home = join(dir, "empty-home");
    expect(summary(loadKubeConfig(undefined, { env: {}, home }))).toEqual({
      error:
        "no kubeconfig found: not in a cluster (KUBERNETES_SERVICE_HOST unset or no service-account token), " +
        `$KUBECONFIG unset, and ${join(home, ".kube", "config")} does not exist; pass --kubeconfig`,
    });
  });

  it("returns an error, not an exception, for a missing or malformed file", async () => {
    const missing = join(dir, "missing.yaml");
    const bad = await file("bad.yaml", "clusters: [ {name: ");
    const missingResult = summary(loadKubeConfig(missing));
    expect(missingResult.error).toMatch(new RegExp(`^cannot load kubeconfig ${missing}: ENOENT`));
    expect(summary(loadKubeConfig(bad)).error).toMatch(
      new RegExp(`^cannot load kubeconfig ${bad}: `),
    );
  });

  it("rejects a current-context that names a missing cluster", async () => {
    const path = await file(
      "dangling.yaml",
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: []",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: c, context: {cluster: gone, user: u}}]",
        "current-context: c",
      ].join("\n"),
    );
    expect(summary(loadKubeConfig(path))).toEqual({
      error: `kubeconfig ${path}: cluster "gone" not found`,
    });
  });
});
