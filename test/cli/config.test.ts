import { describe, expect, it } from "vitest";
import { FLAG_NAMES, parseServeConfig, serveHelp } from "../../src/cli/config.ts";

describe("parseServeConfig", () => {
  it("gives the documented defaults", () => {
    expect(parseServeConfig([], { POD_NAMESPACE: "edge" })).toEqual({
      ok: true,
      value: {
        kubeconfig: undefined,
        registryNamespace: "edge",
        registryName: "replica-registry",
        registryKey: "registry.json",
        secretNamespaces: [],
        secretSelector: undefined,
        listen: { host: "127.0.0.1", port: 8080 },
        opsListen: { host: "0.0.0.0", port: 9090 },
        watchTimeoutSeconds: 300,
        logLevel: "info",
        stateFile: undefined,
        stateKeyFile: undefined,
        stateMaxAgeSeconds: 86_400,
      },
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
