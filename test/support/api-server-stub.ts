// A scripted HTTP server standing in for the API server, plus a kubeconfig pointing at it.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RecordedRequest {
  readonly path: string;
  readonly query: Record<string, string>;
  readonly authorization: string | undefined;
}

export interface ApiStub {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly requests: RecordedRequest[];
  /** Resolves when the client side of the nth request (0-based) has closed its connection. */
  clientClosed(n: number): Promise<void>;
  close(): Promise<void>;
}

export type StubHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;

export const TOKEN = "stub-token-0123";

/** Starts a server on 127.0.0.1:0 and writes a kubeconfig (bearer token, plain HTTP) for it. */
export async function startApiStub(handler: StubHandler): Promise<ApiStub> {
  const requests: RecordedRequest[] = [];
  const closed: Promise<void>[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://stub");
    requests.push({
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
    });
    closed.push(new Promise((resolve) => req.socket.once("close", () => resolve())));
    handler(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const dir = await mkdtemp(join(tmpdir(), "kube-stub-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  await writeFile(kubeconfigPath, kubeconfigYaml(`http://127.0.0.1:${port}`, TOKEN));
  return {
    server: `http://127.0.0.1:${port}`,
    kubeconfigPath,
    requests,
    clientClosed: (n) => closed[n] ?? Promise.reject(new Error(`no request ${n}`)),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A one-context kubeconfig; client-node accepts plain HTTP only with insecure-skip-tls-verify. */
export function kubeconfigYaml(server: string, token: string, namespace = "ns1"): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: stub",
    "  cluster:",
    `    server: ${server}`,
    "    insecure-skip-tls-verify: true",
    "users:",
    "- name: stub",
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: stub",
    "  context:",
    "    cluster: stub",
    "    user: stub",
    `    namespace: ${namespace}`,
    "current-context: stub",
    "",
  ].join("\n");
}

/** Sends a JSON body with a status. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A metav1.Status body. */
export function status(code: number, reason: string, message: string): unknown {
  return { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message };
}
