import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_REGISTRY, runEnvtest, untilSignal } from "@replica-mirror/envtest";
import { parseServeConfig } from "../src/cli/config.ts";
import { makeLogger, startSidecar } from "../src/sidecar/sidecar.ts";
import { startDemoPlane, startEchoUpstream } from "./demo-plane.ts";

/** The demo's App with a credential: its upstream gets `Authorization: Bearer <this>`. */
const VAULT_TOKEN = "vault-demo-token";

/**
 * `npm run demo`: the fake API server seeded with a Registry of two Apps (one whose Secret exists,
 * one whose Secret does not) and a third, `vault`, whose Secret reaches its upstream as
 * Authorization; the sidecar against it, serving credentials; and a data plane of a few lines in
 * front of it, with an upstream that echoes what it got. Serve flags may be passed to override.
 */
async function runDemo(
  argv: readonly string[],
  print: (line: string) => void,
  fail: (line: string) => void,
): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-demo-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  const envtest = await runEnvtest({ seed: "demo", kubeconfigPath }, print);
  const upstream = await startEchoUpstream();
  envtest.apply({ namespace: "tenant-a", name: "vault-credentials", data: { token: VAULT_TOKEN } });
  const vault = {
    name: "vault",
    hostnames: ["vault.example.com"],
    secretRef: { namespace: "tenant-a", name: "vault-credentials", key: "token" },
    upstream: upstream.url,
    credential: { prefix: "Bearer " },
  };
  const registry = { ...DEMO_REGISTRY, apps: [...DEMO_REGISTRY.apps, vault] };
  envtest.apply({
    namespace: "default",
    name: "replica-registry",
    data: { "registry.json": JSON.stringify(registry) },
  });
  const config = parseServeConfig(
    [
      "--kubeconfig",
      kubeconfigPath,
      "--registry-namespace",
      "default",
      "--ops-listen",
      "127.0.0.1:9090",
      "--log-level",
      "warn",
      "--allow-cluster-wide-secrets",
      "true",
      "--serve-credentials",
      "true",
      // vault's upstream is the demo's echo server, on 127.0.0.1.
      "--allow-local-upstreams",
      "true",
      ...argv,
    ],
    {},
  );
  if (!config.ok) {
    fail(config.error);
    await Promise.all([envtest.close(), upstream.close()]);
    return 2;
  }
  const sidecar = await startSidecar(config.value, { logger: makeLogger(config.value.logLevel) });
  if (!sidecar.ok) {
    fail(sidecar.error);
    await Promise.all([envtest.close(), upstream.close()]);
    return 1;
  }
  const { data, ops } = sidecar.value;
  const base = `http://${data.host}:${data.port}`;
  const opsBase = `http://${ops.host}:${ops.port}`;
  const plane = await startDemoPlane(base);
  print("");
  print(`replica-mirror demo: fake API server ${envtest.url} (kubeconfig ${kubeconfigPath})`);
  print(`  data listener (/v1/route)                ${base}`);
  print(`  ops listener (probes, metrics, status API) ${opsBase}`);
  print(`  a data plane in front of it (hop mode)     ${plane.url}`);
  print("");
  print("Try:");
  print(
    `  curl -i -H 'Host: shop.example.com' ${base}/v1/route     # 200: App shop, its Secret is here`,
  );
  print(
    `  curl -i -H 'Host: blog.example.com' ${base}/v1/route     # 503: App blog, its Secret is absent`,
  );
  print(`  curl -i -H 'Host: nope.example.com' ${base}/v1/route     # 404: no App has this host`);
  print(
    `  curl -s -H 'Host: vault.example.com' -H 'Authorization: mine' ${plane.url}/orders   # vault's upstream gets Authorization: Bearer ${VAULT_TOKEN}, not yours`,
  );
  print(`  curl -s ${opsBase}/v1/snapshot`);
  print(`  curl -s ${opsBase}/v1/hosts/blog.example.com`);
  print(
    `  curl -s ${opsBase}/v1/apps/vault      # its credential's prefix and state, never the value`,
  );
  print(
    `  kubectl --kubeconfig ${kubeconfigPath} create secret generic blog-credentials -n tenant-b --from-literal=token=hello`,
  );
  print("");
  print("Ctrl-C to stop.");
  await untilSignal();
  await plane.close();
  await sidecar.value.close();
  await Promise.all([envtest.close(), upstream.close()]);
  return 0;
}

const print = (line: string) => process.stdout.write(`${line}\n`);
const fail = (line: string) => process.stderr.write(`demo: ${line}\n`);
process.exitCode = await runDemo(process.argv.slice(2), print, fail);
