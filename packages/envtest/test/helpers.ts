/**
 * Test plumbing for the envtest server: raw HTTP calls, a line-by-line watch reader, and kubectl.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";

interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

/** One HTTP request against the server; `body` objects are sent as JSON. */
export async function call(
  env: Envtest,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body =
      body instanceof Uint8Array || typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { "content-type": "application/json", ...headers };
  }
  const res = await fetch(`${env.url}${path}`, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const FAILURE = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure" } as const;

/** The Failure Status a refused request answers, for comparing whole bodies. */
export function failureStatus(code: number, reason: string, message: string, details?: object) {
  return { ...FAILURE, code, reason, message, ...(details === undefined ? {} : { details }) };
}

/** The watch of the default namespace's Secrets. */
export const DEFAULT_WATCH = "/api/v1/namespaces/default/secrets?watch=true";

/** Writes default/{name} directly; the default value is fresh, so every call is a change. */
export function putSecret(env: Envtest, name: string, v = String(Math.random())) {
  return env.apply({ namespace: "default", name, data: { v } });
}

/** A Secret manifest for POST/PUT bodies. */
export function secretBody(
  name: string,
  data: Record<string, string> = {},
  extra: { labels?: Record<string, string>; resourceVersion?: string; type?: string } = {},
) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.resourceVersion ? { resourceVersion: extra.resourceVersion } : {}),
    },
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    ),
    ...(extra.type ? { type: extra.type } : {}),
  };
}

interface WatchEvent {
  readonly type: string;
  readonly object: {
    readonly kind?: string;
    readonly code?: number;
    readonly reason?: string;
    readonly message?: string;
    readonly metadata: {
      readonly name?: string;
      readonly resourceVersion?: string;
      readonly annotations?: Record<string, string>;
    };
    readonly data?: Record<string, string>;
  };
}

/** An open watch read line by line. */
interface WatchReader {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Every raw line received so far (without the newline). */
  readonly lines: string[];
  /** Every chunk as received, for chunking assertions. */
  readonly chunks: Buffer[];
  /** The next line parsed as an event; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<WatchEvent>;
  /** The next raw line. */
  nextLine(timeoutMs?: number): Promise<string>;
  /** Collects `n` events. */
  take(n: number, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Resolves how the stream ended: "end" (clean) or "error" (socket destroyed). */
  readonly ended: Promise<"end" | "error">;
  close(): void;
}

const agent = new Agent({ keepAlive: false });

/** Opens a watch (or any streaming GET) and reads it line by line. */
export function openWatch(
  env: Envtest,
  path: string,
  headers: Record<string, string> = {},
): Promise<WatchReader> {
  return new Promise((resolve, reject) => {
    const req = request(`${env.url}${path}`, { agent, headers }, (res) => {
      const lines: string[] = [];
      const chunks: Buffer[] = [];
      const waiters: ((l: string) => void)[] = [];
      let buf = "";
      let endedWith: "end" | "error" | undefined;
      let resolveEnded: (v: "end" | "error") => void = () => {};
      const ended = new Promise<"end" | "error">((r) => {
        resolveEnded = r;
      });
      let cursor = 0;
      const finish = (how: "end" | "error") => {
        if (endedWith !== undefined) return;
        endedWith = how;
        resolveEnded(how);
      };
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        buf += c.toString("latin1");
        for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
          const line = Buffer.from(buf.slice(0, i), "latin1").toString("utf8");
          buf = buf.slice(i + 1);
          lines.push(line);
          waiters.shift()?.(line);
        }
      });
      res.on("end", () => finish("end"));
      res.on("error", () => finish("error"));
      res.on("close", () => finish(res.complete ? "end" : "error"));
      const nextLine = (timeoutMs = 5000): Promise<string> => {
        if (cursor < lines.length) return Promise.resolve(lines[cursor++] ?? "");
        return new Promise((ok, fail) => {
          const t = setTimeout(
            () => fail(new Error(`no watch line within ${timeoutMs} ms`)),
            timeoutMs,
          );
          waiters.push((l) => {
            clearTimeout(t);
            cursor++;
            ok(l);
          });
        });
      };
      const next = async (timeoutMs = 5000) => JSON.parse(await nextLine(timeoutMs)) as WatchEvent;
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        lines,
        chunks,
        next,
        nextLine,
        take: async (n, timeoutMs = 5000) => {
          const out: WatchEvent[] = [];
          for (let i = 0; i < n; i++) out.push(await next(timeoutMs));
          return out;
        },
        ended,
        close: () => req.destroy(),
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** vi.waitFor options for a server or client catching up; its 1 s default is tight under load. */
export const SETTLE = { timeout: 5_000, interval: 10 } as const;

function onPath(cmd: string): string | undefined {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .map((dir) => join(dir, cmd))
    .find((p) => existsSync(p));
}

/** The kubectl under test: $KUBECTL, else the first on PATH, else /usr/bin/kubectl. */
export const KUBECTL = process.env.KUBECTL ?? onPath("kubectl") ?? "/usr/bin/kubectl";

/** Fails (never skips) when kubectl is missing: these tests are the proof real clients work. */
export function requireKubectl(): void {
  if (!existsSync(KUBECTL)) {
    throw new Error(
      `kubectl (v1.32) is required by the envtest integration tests and was not found at ${KUBECTL}; install it or set KUBECTL`,
    );
  }
}

/** A kubeconfig file and a fresh kubectl cache dir, removed by `cleanup`. */
export async function kubectlWorkspace(env: Envtest, client?: string) {
  const dir = await mkdtemp(join(tmpdir(), "envtest-kubectl-"));
  const kubeconfig = join(dir, "kubeconfig");
  await env.writeKubeconfig(kubeconfig, client === undefined ? {} : { client });
  const base = ["--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache")];
  return {
    dir,
    base,
    run: (args: readonly string[], timeout = 20_000) => kubectl([...base, ...args], timeout),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs kubectl; resolves with its output whatever the exit code. */
function kubectl(
  args: readonly string[],
  timeout = 20_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, args, { timeout }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

type KubectlWorkspace = Awaited<ReturnType<typeof kubectlWorkspace>>;

/**
 * A fresh envtest and kubectl workspace for each test of the calling file (the hooks are
 * registered here); read `env` and `ws` inside tests.
 */
export function kubectlSession(): { env: Envtest; ws: KubectlWorkspace } {
  const session = {} as { env: Envtest; ws: KubectlWorkspace };
  beforeEach(async () => {
    requireKubectl();
    session.env = await startEnvtest();
    session.ws = await kubectlWorkspace(session.env);
  });
  afterEach(async () => {
    await session.env?.close();
    await session.ws?.cleanup();
  });
  return session;
}

/** Runs kubectl in ws; throws with its stderr unless it exits 0. */
export async function kubectlOk(ws: KubectlWorkspace, args: readonly string[]) {
  const r = await ws.run(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r;
}
