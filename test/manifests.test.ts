import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseServeConfig } from "../src/cli/config.ts";

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

interface Container {
  name: string;
  restartPolicy?: string;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  startupProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: { runAsUser?: number; [key: string]: unknown };
}

function render(dir: string): K8sObject[] {
  const out = execFileSync("kubectl", ["kustomize", `manifests/${dir}`], { encoding: "utf8" });
  return parseAllDocuments(out).map((d) => d.toJS() as K8sObject);
}

const serveHelp = execFileSync(process.execPath, ["src/cli/main.ts", "serve", "--help"], {
  encoding: "utf8",
});

/** The pod of the one Deployment of `objects`, and the sidecar in it. */
function podOf(objects: K8sObject[]) {
  const deployment = objects.find((o) => o.kind === "Deployment")!;
  const pod = (deployment as unknown as { spec: { template: { spec: Record<string, unknown> } } })
    .spec.template.spec;
  const initContainers = (pod.initContainers ?? []) as Container[];
  const containers = [...initContainers, ...(pod.containers as Container[])];
  const sidecar = initContainers.find((c) => c.name === "replica-mirror")!;
  return { pod, initContainers, containers, sidecar };
}

/** What `serve` makes of the sidecar's arguments in a pod of namespace `edge`. */
const serveParses = (sidecar: Container) =>
  parseServeConfig((sidecar.args ?? []).slice(1), { POD_NAMESPACE: "edge" });

describe.each(["overlays/cluster-wide", "overlays/namespaced"])("manifests/%s", (overlay) => {
  const objects = render(overlay);
  const { pod, initContainers, containers, sidecar } = podOf(objects);

  it("runs the sidecar as a native sidecar: the first init container, restarted always", () => {
    expect(initContainers.map((c) => [c.name, c.restartPolicy])).toEqual([
      ["replica-mirror", "Always"],
    ]);
  });

  it("probes the sidecar on its ops port: /healthz for liveness, /readyz for readiness", () => {
    const opsPort = sidecar.ports?.find((p) => p.name === "ops");
    expect(opsPort?.containerPort).toBe(9090);
    expect(sidecar.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "ops" });
    expect(sidecar.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "ops" });
    expect(sidecar.startupProbe?.httpGet).toEqual({ path: "/readyz", port: "ops" });
    expect(sidecar.args).toContain("--ops-listen=0.0.0.0:9090");
  });

  it("runs every container non-root, read-only, without privilege escalation or capabilities", () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    for (const c of containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });
      expect(c.resources?.requests).toBeDefined();
      expect(c.resources?.limits?.memory).toBeDefined();
    }
  });

  it("takes the namespace from the downward API and mounts the API token into the sidecar only", () => {
    expect(sidecar.env).toContainEqual({
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount";
    expect(
      containers.map((c) => (c.volumeMounts ?? []).some((m) => m.mountPath === tokenPath)),
    ).toEqual(containers.map((c) => c === sidecar));
  });

  it("gives the sidecar an App Secret scope that serve starts with", () => {
    expect(serveParses(sidecar).ok).toBe(true);
  });

  it("passes the sidecar only flags that serve --help knows", () => {
    const [command, ...flags] = sidecar.args ?? [];
    expect(command).toBe("serve");
    for (const flag of flags) {
      const name = /^--([a-z-]+)=/.exec(flag)?.[1];
      expect(name && serveHelp.includes(`--${name} `), flag).toBe(true);
    }
  });

  it("grants only get, list and watch on secrets, and nothing about Leases", () => {
    const roles = objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole");
    expect(roles.length).toBeGreaterThan(0);
    for (const role of roles) {
      for (const rule of role.rules as {
        apiGroups: string[];
        resources: string[];
        verbs: string[];
      }[]) {
        expect(rule).toMatchObject({ apiGroups: [""], resources: ["secrets"] });
        expect([...rule.verbs].sort()).toEqual(["get", "list", "watch"]);
      }
    }
  });
});

describe("manifests/base and its component, with no overlay", () => {
  const { pod, containers, sidecar } = podOf(render("base"));

  it("leave the App Secret scope to an overlay: serve refuses to start cluster-wide unasked", () => {
    const parsed = serveParses(sidecar);
    expect(parsed.ok === false && parsed.error).toMatch(/--allow-cluster-wide-secrets true/);
  });

  it("let nginx keep accepting for 5 s after termination begins, and leave time to stop both", () => {
    const nginx = containers.find((c) => c.name === "nginx");
    expect(nginx?.lifecycle?.preStop?.exec?.command).toEqual(["sleep", "5"]);
    const config = parseServeConfig(
      [...(sidecar.args ?? []).slice(1), "--secret-namespaces=a"],
      {},
    );
    const grace = config.ok ? config.value.shutdownGraceSeconds : Number.NaN;
    // nginx's preStop, then (once nginx has exited) the sidecar's grace and its 5 s to close,
    // with at least 10 s left for nginx to finish what it has in flight.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(5 + grace + 5 + 10);
  });
});

describe("manifests/overlays/cluster-wide", () => {
  it("opts in to the cluster-wide App Secret watch explicitly", () => {
    const { sidecar } = podOf(render("overlays/cluster-wide"));
    expect(sidecar.args).toContain("--allow-cluster-wide-secrets=true");
  });
});

describe("manifests/overlays/network-policy", () => {
  const policies = render("overlays/network-policy") as unknown as {
    kind: string;
    metadata: { name: string; namespace: string };
    spec: {
      podSelector: { matchLabels: Record<string, string> };
      policyTypes: string[];
      ingress: { from?: unknown; ports: { protocol: string; port: number }[] }[];
    };
  }[];

  it("admits to the sidecar's pods only the data plane's port and the ops port", () => {
    const base = render("base");
    const { containers } = podOf(base);
    const podLabels = (
      base.find((o) => o.kind === "Deployment") as unknown as {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }
    ).spec.template.metadata.labels;
    const exposed = containers
      .flatMap((c) => c.ports ?? [])
      .map((p) => p.containerPort)
      .sort();
    expect(policies.map((p) => [p.kind, p.metadata.namespace])).toEqual([
      ["NetworkPolicy", "edge"],
      ["NetworkPolicy", "edge"],
    ]);
    for (const p of policies) {
      expect(podLabels).toMatchObject(p.spec.podSelector.matchLabels);
      expect(p.spec.policyTypes).toEqual(["Ingress"]);
    }
    const admitted = policies
      .flatMap((p) => p.spec.ingress.flatMap((rule) => rule.ports))
      .map((port) => [port.protocol, port.port]);
    expect(admitted.sort()).toEqual(exposed.map((port) => ["TCP", port]));
    expect(exposed).toEqual([8000, 9090]);
  });

  it("admits the ops port from the monitoring namespace only, the data plane's from anywhere", () => {
    const rules = policies.map((p) => [
      p.metadata.name,
      p.spec.ingress.map((rule) => ({ from: rule.from, ports: rule.ports.map((q) => q.port) })),
    ]);
    expect(rules).toEqual([
      ["replica-mirror-data-plane", [{ from: undefined, ports: [8000] }]],
      [
        "replica-mirror-ops",
        [
          {
            from: [
              {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
              },
            ],
            ports: [9090],
          },
        ],
      ],
    ]);
  });
});

describe("manifests/overlays/namespaced", () => {
  const objects = render("overlays/namespaced");

  it("pins the Registry Role to the Registry Secret's name and runs the sidecar per namespace", () => {
    const registryRole = objects.find(
      (o) => o.kind === "Role" && o.metadata.name === "replica-mirror-registry-reader",
    );
    const rules = (registryRole?.rules ?? []) as { resourceNames?: string[] }[];
    expect(rules[0]?.resourceNames).toEqual(["replica-registry"]);
    const roleNamespaces = objects
      .filter((o) => o.kind === "Role" && o.metadata.name === "replica-mirror-secrets-reader")
      .map((o) => o.metadata.namespace);
    const args = podOf(objects).sidecar.args ?? [];
    const flag = args.find((a) => a.startsWith("--secret-namespaces="));
    expect(flag?.slice("--secret-namespaces=".length).split(",")).toEqual(roleNamespaces);
    expect(objects.some((o) => o.kind === "ClusterRole")).toBe(false);
  });
});

describe("manifests/examples", () => {
  it("holds a Registry Secret that the validator accepts and the App Secret it references", () => {
    const objects = render("examples");
    const registry = objects.find((o) => o.metadata.name === "replica-registry") as unknown as {
      stringData: Record<string, string>;
    };
    const doc = JSON.parse(registry.stringData["registry.json"]!) as {
      apps: { secretRef: { namespace: string; name: string } }[];
    };
    expect(
      objects.some((o) => o.kind === "Secret" && o.metadata.name === doc.apps[0]?.secretRef.name),
    ).toBe(true);
  });
});

describe("manifests/examples/zero-hop and components/zero-hop-push", () => {
  const { pod, containers, sidecar } = podOf(render("examples/zero-hop"));
  const dir = "/var/run/replica-mirror/push";
  const podUser = (pod.securityContext as { runAsUser?: number }).runAsUser;

  it("mount the push volume in the sidecar and the data plane only, both running as 65532", () => {
    expect(
      containers.map((c) => ({
        name: c.name,
        push: (c.volumeMounts ?? []).filter((m) => m.name === "replica-mirror-push"),
        user: c.securityContext?.runAsUser ?? podUser,
      })),
    ).toEqual([
      {
        name: "replica-mirror",
        push: [{ name: "replica-mirror-push", mountPath: dir }],
        user: 65532,
      },
      { name: "default-certificate", push: [], user: 65532 },
      { name: "haproxy", push: [{ name: "replica-mirror-push", mountPath: dir }], user: 65532 },
    ]);
  });

  it("point the sidecar at the shipped configurations' sockets in that volume, and open no port for them", () => {
    const parsed = serveParses(sidecar);
    const shipped = (path: string) => readFileSync(`manifests/data-planes/${path}`, "utf8");
    const caddy = JSON.parse(shipped("caddy/zero-hop/caddy.json")) as { admin: { listen: string } };
    expect({
      push: parsed.ok && parsed.value.push,
      haproxy: /^\s*stats socket .*$/m.exec(shipped("haproxy/zero-hop/haproxy.cfg"))?.[0].trim(),
      nginx: /^\s*listen unix:.*$/m.exec(shipped("nginx/zero-hop/nginx.conf"))?.[0].trim(),
      caddy: caddy.admin.listen,
      ports: containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort)),
    }).toEqual({
      push: [
        {
          kind: "haproxy",
          socket: `${dir}/haproxy.sock`,
          map: "/usr/local/etc/haproxy/replica-mirror.map",
          credentialsMap: "/usr/local/etc/haproxy/replica-mirror-credentials.map",
          crtList: "/usr/local/etc/haproxy/replica-mirror.crt-list",
        },
      ],
      haproxy: `stats socket ${dir}/haproxy.sock mode 600 level admin`,
      nginx: `listen unix:${dir}/nginx.sock;`,
      caddy: `unix/${dir}/caddy.sock`,
      ports: [9090, 8000, 8443],
    });
  });
});
