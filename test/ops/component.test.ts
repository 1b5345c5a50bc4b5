import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

interface Container {
  name: string;
  args?: string[];
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
  [key: string]: unknown;
}

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  initContainers?: Container[];
  containers: Container[];
  volumes?: { name: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

const TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const EXAMPLE = "manifests/examples/existing-deployment";

function render(dir: string): Rendered[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  return parseAllDocuments(out).map((d) => d.toJS() as Rendered);
}

function podOf(objects: Rendered[], name: string): PodSpec {
  const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === name);
  if (deployment?.spec === undefined) throw new Error(`no Deployment ${name}`);
  return deployment.spec.template.spec;
}

/** The sidecar container exactly as the component's one definition gives it. */
const componentSidecar = (
  parse(readFileSync("manifests/components/replica-mirror/sidecar.yaml", "utf8")) as {
    spec: { template: { spec: PodSpec } };
  }
).spec.template.spec.initContainers![0]!;

const input = parse(readFileSync(`${EXAMPLE}/deployment.yaml`, "utf8")) as {
  spec: { template: { spec: PodSpec } };
};

describe("manifests/components/replica-mirror on a Deployment that is not ours", () => {
  const objects = render(EXAMPLE);
  const pod = podOf(objects, "haproxy");
  const [haproxy] = pod.containers;
  const [sidecar] = pod.initContainers ?? [];

  it("leaves the data plane's container and volumes as they were, and adds the sidecar as a native sidecar", () => {
    expect(pod.containers.map((c) => c.name)).toEqual(["haproxy"]);
    expect((pod.initContainers ?? []).map((c) => [c.name, c.restartPolicy])).toEqual([
      ["replica-mirror", "Always"],
    ]);
    expect(haproxy).toEqual(input.spec.template.spec.containers[0]);
    expect(pod.volumes).toEqual(expect.arrayContaining(input.spec.template.spec.volumes ?? []));
    expect(pod.securityContext).toEqual(input.spec.template.spec.securityContext);
  });

  it("keeps the state file in node memory, its key optional, both mounted in the sidecar only", () => {
    const volume = (name: string) => pod.volumes?.find((v) => v.name === name);
    expect([volume("replica-mirror-state"), volume("replica-mirror-state-key")]).toEqual([
      { name: "replica-mirror-state", emptyDir: { medium: "Memory", sizeLimit: "32Mi" } },
      {
        name: "replica-mirror-state-key",
        secret: { secretName: "replica-mirror-state-key", optional: true, defaultMode: 0o444 },
      },
    ]);
    const mountsOf = (c: Container | undefined) => (c?.volumeMounts ?? []).map((m) => m.name);
    expect(mountsOf(haproxy).filter((n) => n.startsWith("replica-mirror"))).toEqual([]);
    expect(mountsOf(sidecar)).toEqual(
      expect.arrayContaining(["replica-mirror-state", "replica-mirror-state-key"]),
    );
    expect(sidecar?.args).toEqual(
      expect.arrayContaining([
        "--state-file=/var/run/replica-mirror/state/last-good",
        "--state-key-file=/etc/replica-mirror/state-key/key",
      ]),
    );
  });

  it("adds the component's sidecar, with the operator's own flags patched in after it", () => {
    expect(sidecar).toEqual({
      ...componentSidecar,
      args: [
        ...(componentSidecar.args ?? []),
        "--registry-namespace=edge",
        "--secret-namespaces=tenant-a,tenant-b",
      ],
    });
  });

  it("keeps the README's security posture on the sidecar whatever the pod asks for", () => {
    expect(sidecar?.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe", "resources"]) {
      expect(sidecar?.[probe], probe).toBeDefined();
    }
  });

  it("mounts the API token into the sidecar only, from the ServiceAccount it adds", () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe("replica-mirror");
    expect(
      [...pod.containers, ...(pod.initContainers ?? [])].map((c) =>
        (c.volumeMounts ?? []).some((m) => m.mountPath === TOKEN_PATH),
      ),
    ).toEqual([false, true]);
    const token = sidecar?.volumeMounts?.find((m) => m.mountPath === TOKEN_PATH)?.name;
    expect(pod.volumes?.find((v) => v.name === token)).toHaveProperty("projected");
    expect(objects.filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata)).toMatchObject(
      [{ name: "replica-mirror", namespace: "ingress" }],
    );
  });

  it("labels the pod for the monitoring overlay's PodMonitor", () => {
    const labels = objects.find((o) => o.kind === "Deployment")?.spec?.template.metadata.labels;
    expect(labels).toEqual({ app: "haproxy", ...podMonitor().selector.matchLabels });
  });
});

describe("manifests/overlays/monitoring", () => {
  const objects = render("manifests/overlays/monitoring") as unknown as {
    kind: string;
    metadata: { name: string; namespace: string; labels?: Record<string, string> };
    data?: Record<string, string>;
    spec?: unknown;
  }[];

  it("scrapes the sidecar's ops port and ships the rules and the dashboard", () => {
    expect(objects.map((o) => [o.kind, o.metadata.namespace])).toEqual([
      ["ConfigMap", "edge"],
      ["PodMonitor", "edge"],
      ["PrometheusRule", "edge"],
    ]);
    const ops = componentSidecar.ports as { name: string; containerPort: number }[];
    expect(podMonitor().podMetricsEndpoints).toEqual([
      { port: ops[0]?.name, path: "/metrics", interval: "30s" },
    ]);
    const dashboard = objects.find((o) => o.kind === "ConfigMap");
    expect(dashboard?.metadata.labels).toEqual({ grafana_dashboard: "1" });
    expect(dashboard?.data).toEqual({
      "dashboard.json": readFileSync("manifests/overlays/monitoring/dashboard.json", "utf8"),
    });
  });
});

function podMonitor(): {
  selector: { matchLabels: Record<string, string> };
  podMetricsEndpoints: unknown[];
} {
  return (
    parse(readFileSync("manifests/overlays/monitoring/podmonitor.yaml", "utf8")) as {
      spec: ReturnType<typeof podMonitor>;
    }
  ).spec;
}

describe("manifests/base", () => {
  it("adds its sidecar with the same component: one definition of the container", () => {
    const pod = podOf(render("manifests/base"), "edge");
    expect(pod.containers.map((c) => c.name)).toEqual(["nginx"]);
    expect(pod.initContainers).toEqual([componentSidecar]);
  });
});
