import { describe, expect, it } from "vitest";
import { parseServeConfig } from "../../src/cli/config.ts";
import { FLAG_NAMES, serveHelp } from "../../src/cli/flags.ts";

describe("parseServeConfig", () => {
  it("gives the documented defaults, given an App Secret scope", () => {
    expect(
      parseServeConfig(["--secret-namespaces", "tenant-a"], { POD_NAMESPACE: "edge" }),
    ).toEqual({
      ok: true,
      value: {
        kubeconfig: undefined,
        registryNamespace: "edge",
        registryName: "replica-registry",
        registryKey: "registry.json",
        secretNamespaces: ["tenant-a"],
        secretSelector: undefined,
        listen: { host: "127.0.0.1", port: 8080 },
        opsListen: { host: "0.0.0.0", port: 9090 },
        allowRemoteStatusApi: false,
        watchTimeoutSeconds: 300,
        logLevel: "info",
        stateFile: undefined,
        stateKeyFile: undefined,
        stateMaxAgeSeconds: 86_400,
        allowNonLoopbackListen: false,
        maxConnections: 1024,
        listenHeadersTimeoutSeconds: 10,
        listenIdleTimeoutSeconds: undefined,
        shutdownGraceSeconds: 5,
        allowClusterWideSecrets: false,
        allowLocalUpstreams: false,
        serveCredentials: false,
        serveCertificates: false,
        push: [],
      },
    });
  });

  it("reaches each zero-hop proxy through a Unix socket only, never a TCP address", () => {
    const push = (...flags: string[]) => {
      const parsed = parseServeConfig(["--allow-cluster-wide-secrets=true", ...flags], {});
      return parsed.ok ? parsed.value.push : parsed.error;
    };
    const dir = "/var/run/replica-mirror/push";
    expect([
      push(
        `--push-haproxy=unix:${dir}/haproxy.sock`,
        `--push-caddy=unix:${dir}/caddy.sock`,
        `--push-nginx=unix:${dir}/nginx.sock`,
      ),
      push(`--push-haproxy=${dir}/haproxy.sock`),
      push("--push-nginx=http://127.0.0.1:8001"),
      push("--push-caddy=127.0.0.1:2019"),
      push("--push-haproxy=127.0.0.1:9999"),
      push(`--push-nginx=${dir}/nginx.sock`),
      push("--push-caddy=unix:caddy.sock"),
    ]).toEqual([
      [
        {
          kind: "haproxy",
          socket: `${dir}/haproxy.sock`,
          map: "/usr/local/etc/haproxy/replica-mirror.map",
          credentialsMap: "/usr/local/etc/haproxy/replica-mirror-credentials.map",
          crtList: "/usr/local/etc/haproxy/replica-mirror.crt-list",
        },
        { kind: "caddy", socket: `${dir}/caddy.sock` },
        { kind: "nginx", socket: `${dir}/nginx.sock` },
      ],
      [
        {
          kind: "haproxy",
          socket: `${dir}/haproxy.sock`,
          map: "/usr/local/etc/haproxy/replica-mirror.map",
          credentialsMap: "/usr/local/etc/haproxy/replica-mirror-credentials.map",
          crtList: "/usr/local/etc/haproxy/replica-mirror.crt-list",
        },
      ],
      "--push-nginx: expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got 'http://127.0.0.1:8001'",
      "--push-caddy: expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got '127.0.0.1:2019'",
      "--push-haproxy: expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got '127.0.0.1:9999'",
      "--push-nginx: expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got '/var/run/replica-mirror/push/nginx.sock'",
      "--push-caddy: expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got 'unix:caddy.sock'",
    ]);
  });

  it("refuses to watch App Secrets cluster-wide without a selector unless told it may", () => {
    const scope = (argv: string[], env: Record<string, string> = {}) => {
      const parsed = parseServeConfig(argv, env);
      return parsed.ok ? "starts" : parsed.error;
    };
    expect([
      scope([]),
      scope(["--secret-selector", "replica-mirror.example/app=true"]),
      scope(["--secret-namespaces", "a"]),
      scope(["--allow-cluster-wide-secrets", "true"]),
      scope([], { REPLICA_MIRROR_ALLOW_CLUSTER_WIDE_SECRETS: "true" }),
      scope(["--allow-cluster-wide-secrets", "false"]),
    ]).toEqual([
      "--secret-namespaces: empty, and no --secret-selector: the sidecar would read every Secret in the cluster; name the App Secrets' namespaces, label them and pass --secret-selector, or pass --allow-cluster-wide-secrets true",
      "starts",
      "starts",
      "starts",
      "starts",
      expect.stringMatching(/^--secret-namespaces: empty/),
    ]);
  });

  it("listens for the data plane on loopback only, unless told it may listen elsewhere", () => {
    const listen = (address: string, ...more: string[]) => {
      const parsed = parseServeConfig(
        ["--secret-namespaces=a", `--listen=${address}`, ...more],
        {},
      );
      return parsed.ok ? parsed.value.listen : parsed.error;
    };
    expect([
      listen("127.0.0.1:1"),
      listen("127.8.0.1:1"),
      listen("[::1]:1"),
      listen("localhost:1"),
      listen("0.0.0.0:8080"),
      listen("[::]:8080"),
      listen("10.0.0.7:8080", "--allow-non-loopback-listen", "true"),
    ]).toEqual([
      { host: "127.0.0.1", port: 1 },
      { host: "127.8.0.1", port: 1 },
      { host: "::1", port: 1 },
      { host: "localhost", port: 1 },
      "--listen: 0.0.0.0 is not a loopback address, and the data listener tells anyone who reaches it App names and upstreams; pass --allow-non-loopback-listen true to listen there anyway",
      expect.stringMatching(/^--listen: :: is not a loopback address/),
      { host: "10.0.0.7", port: 8080 },
    ]);
  });

  it("keeps the status API to loopback peers unless told to answer the pod network", () => {
    const remote = (argv: string[], env: Record<string, string> = {}) => {
      const parsed = parseServeConfig(["--secret-namespaces=a", ...argv], env);
      return parsed.ok ? parsed.value.allowRemoteStatusApi : parsed.error;
    };
    expect([
      remote([]),
      remote(["--allow-remote-status-api", "true"]),
      remote([], { REPLICA_MIRROR_ALLOW_REMOTE_STATUS_API: "true" }),
      remote(["--allow-remote-status-api=false"], {
        REPLICA_MIRROR_ALLOW_REMOTE_STATUS_API: "true",
      }),
      remote(["--allow-remote-status-api", "yes"]),
    ]).toEqual([false, true, true, false, "--allow-remote-status-api: must be true or false"]);
  });

  it("refuses local upstreams unless the flag or its variable allows them", () => {
    const allowed = (argv: string[], env: Record<string, string> = {}) => {
      const parsed = parseServeConfig(["--secret-namespaces=a", ...argv], env);
      return parsed.ok ? parsed.value.allowLocalUpstreams : parsed.error;
    };
    expect([
      allowed([]),
      allowed(["--allow-local-upstreams", "true"]),
      allowed([], { REPLICA_MIRROR_ALLOW_LOCAL_UPSTREAMS: "true" }),
      allowed(["--allow-local-upstreams=false"], { REPLICA_MIRROR_ALLOW_LOCAL_UPSTREAMS: "true" }),
      allowed(["--allow-local-upstreams", "yes"]),
    ]).toEqual([false, true, true, false, "--allow-local-upstreams: must be true or false"]);
  });

  it("serves credentials only when the flag or its variable says so", () => {
    const serving = (argv: string[], env: Record<string, string> = {}) => {
      const parsed = parseServeConfig(["--secret-namespaces=a", ...argv], env);
      return parsed.ok ? parsed.value.serveCredentials : parsed.error;
    };
    expect([
      serving([]),
      serving(["--serve-credentials", "true"]),
      serving([], { REPLICA_MIRROR_SERVE_CREDENTIALS: "true" }),
      serving(["--serve-credentials=false"], { REPLICA_MIRROR_SERVE_CREDENTIALS: "true" }),
      serving(["--serve-credentials", "1"]),
    ]).toEqual([false, true, true, false, "--serve-credentials: must be true or false"]);
  });

  it("takes the data listener's limits and the shutdown grace from their flags", () => {
    const parsed = parseServeConfig(
      [
        "--allow-cluster-wide-secrets=true",
        "--max-connections=64",
        "--listen-headers-timeout=2",
        "--listen-idle-timeout=0",
        "--shutdown-grace=0",
      ],
      {},
    );
    expect(parsed.ok && parsed.value).toMatchObject({
      maxConnections: 64,
      listenHeadersTimeoutSeconds: 2,
      listenIdleTimeoutSeconds: 0,
      shutdownGraceSeconds: 0,
    });
  });

  it("reads REPLICA_MIRROR_* variables, and flags win over them", () => {
    const parsed = parseServeConfig(["--watch-timeout=5", "--listen", "127.0.0.1:0"], {
      REPLICA_MIRROR_WATCH_TIMEOUT: "60",
      REPLICA_MIRROR_SECRET_NAMESPACES: "a, b,,c",
      REPLICA_MIRROR_REGISTRY_NAMESPACE: "platform",
      REPLICA_MIRROR_OPS_LISTEN: "[::1]:9191",
      REPLICA_MIRROR_SECRET_SELECTOR: "app.kubernetes.io/part-of=shop",
    });
    expect(parsed.ok && parsed.value).toMatchObject({
      watchTimeoutSeconds: 5,
      listen: { host: "127.0.0.1", port: 0 },
      opsListen: { host: "::1", port: 9191 },
      secretNamespaces: ["a", "b", "c"],
      registryNamespace: "platform",
      secretSelector: "app.kubernetes.io/part-of=shop",
    });
  });

  it.each([
    [["--listen", "8080"], {}, "--listen: expected HOST:PORT (port 0-65535), got '8080'"],
    [
      ["--listen=127.0.0.1:99999"],
      {},
      "--listen: expected HOST:PORT (port 0-65535), got '127.0.0.1:99999'",
    ],
    [
      ["--watch-timeout", "soon"],
      {},
      "--watch-timeout: Invalid input: expected number, received NaN",
    ],
    [["--watch-timeout", "0"], {}, "--watch-timeout: must be at least 1"],
    [
      ["--log-level", "loud"],
      {},
      '--log-level: Invalid option: expected one of "trace"|"debug"|"info"|"warn"|"error"|"fatal"',
    ],
    [
      ["--secret-namespaces", "ok,Not_OK"],
      {},
      "--secret-namespaces: must be a DNS-1123 label (lower-case letters, digits, '-')",
    ],
    [
      ["--listen", ":8080"],
      {},
      "--listen: expected HOST:PORT with a host (127.0.0.1 for loopback, 0.0.0.0 for every interface), got ':8080'",
    ],
    [
      ["--ops-listen", ":9090"],
      {},
      "--ops-listen: expected HOST:PORT with a host (127.0.0.1 for loopback, 0.0.0.0 for every interface), got ':9090'",
    ],
    [
      ["--allow-non-loopback-listen", "yes"],
      {},
      "--allow-non-loopback-listen: must be true or false",
    ],
    [["--max-connections", "0"], {}, "--max-connections: must be at least 1"],
    [["--listen-headers-timeout", "0"], {}, "--listen-headers-timeout: must be at least 1"],
    [["--listen-idle-timeout", "-1"], {}, "--listen-idle-timeout: must be at least 0"],
    [["--shutdown-grace", "1.5"], {}, "--shutdown-grace: must be a whole number"],
    [["--nope", "1"], {}, "--nope: unknown flag (see --help)"],
    [["--registry-name"], {}, "--registry-name: needs a value"],
    [["stray"], {}, "unexpected argument 'stray'"],
    [
      [],
      { REPLICA_MIRROR_WATCH_TIMEOUT: "-3" },
      "REPLICA_MIRROR_WATCH_TIMEOUT: must be at least 1",
    ],
  ])("refuses %j %j with one line naming the flag", (argv, env, message) => {
    expect(parseServeConfig(argv, env)).toEqual({ ok: false, error: message });
  });

  it("documents every flag, its variable and its default in --help", () => {
    const help = serveHelp();
    for (const name of FLAG_NAMES) {
      expect(help).toContain(`--${name} `);
      expect(help).toContain(`env REPLICA_MIRROR_${name.toUpperCase().replaceAll("-", "_")};`);
    }
  });
});
