// What the zero-hop tests send and expect: echo upstreams that report what reached them, a raw
// client that sends any Host byte for byte, and the answers each proxy shows the client.
// Everything listens on 127.0.0.1. The proxies themselves: zero-hop-proxies.ts.

import http from "node:http";
import type { RouteAnswer } from "../../src/answers/route-answer.ts";
import { sha256 } from "./echo-upstream.ts";
import { header, RawConnection } from "./raw-http.ts";

/** What reached an echo upstream. */
export interface ZeroHopEchoed {
  /** Which upstream answered: its index in `EchoUpstreams.urls`. */
  readonly upstream: number;
  readonly method: string;
  readonly path: string;
  readonly host: string | null;
  /** Every `x-mirror-*` header that arrived, by lower-case name. */
  readonly mirror: Readonly<Record<string, string>>;
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

export interface EchoUpstreams {
  /** `http://127.0.0.1:<port>` of each upstream. */
  readonly urls: readonly string[];
  close(): Promise<void>;
}

/** `count` upstreams, each answering every request with its `ZeroHopEchoed` JSON. */
export async function startEchoUpstreams(count: number): Promise<EchoUpstreams> {
  const servers = await Promise.all(
    Array.from({ length: count }, async (_, upstream) => {
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const body = Buffer.concat(chunks);
          const mirror: Record<string, string> = {};
          for (const [name, value] of Object.entries(req.headers)) {
            if (name.startsWith("x-mirror-")) mirror[name] = String(value);
          }
          const echoed: ZeroHopEchoed = {
            upstream,
            method: req.method ?? "",
            path: req.url ?? "",
            host: req.headers.host ?? null,
            mirror,
            bodyBytes: body.length,
            bodySha256: sha256(body),
          };
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(echoed));
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return server;
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}`),
    close: () =>
      Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => {}),
  };
}

/** A client request, sent byte for byte: `host` null sends no Host line. */
export interface ZeroHopRequest {
  readonly host: string | null;
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
}

/** What the client sees: the answer's status, reason, retry-after, and the upstream's report or the body. */
export interface ZeroHopAnswer {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfter: string | null;
  readonly echoed: ZeroHopEchoed | null;
  readonly body: string;
}

/** One request on its own connection (the Host as UTF-8 bytes). */
export async function ask(port: number, request: ZeroHopRequest): Promise<ZeroHopAnswer> {
  const body = Buffer.from(request.body ?? new Uint8Array());
  const lines = [`${request.method ?? "GET"} ${request.path ?? "/orders/42"} HTTP/1.1`];
  if (request.host !== null) lines.push(`Host: ${request.host}`);
  for (const [name, value] of Object.entries(request.headers ?? {}))
    lines.push(`${name}: ${value}`);
  if (body.length > 0) lines.push(`Content-Length: ${body.length}`);
  lines.push("Connection: close", "", "");
  const connection = new RawConnection(port);
  try {
    const exchange = await connection.exchange(
      Buffer.concat([Buffer.from(lines.join("\r\n"), "utf8"), body]),
      request.method === "HEAD",
      10_000,
    );
    if (exchange.kind !== "answer")
      throw new Error(`no answer for ${request.host}: ${exchange.kind}`);
    const { response } = exchange;
    const text = response.body.toString("utf8");
    const json = header(response, "content-type") === "application/json";
    return {
      status: response.status,
      reason: header(response, "x-mirror-reason") ?? null,
      retryAfter: header(response, "retry-after") ?? null,
      echoed: json ? (JSON.parse(text) as ZeroHopEchoed) : null,
      body: json ? "" : text,
    };
  } finally {
    connection.destroy();
  }
}

/** What a zero-hop proxy shows the client for each answer that is not routed. */
export interface RefusedAnswers {
  readonly secretUnavailable: ZeroHopAnswer;
  readonly notSynced: ZeroHopAnswer;
  readonly unknownHost: ZeroHopAnswer;
  readonly badHost: ZeroHopAnswer;
  /** A routed App whose upstream is not http://host[:port]. */
  readonly noHttpUpstream: ZeroHopAnswer;
}

export const refused = (
  status: number,
  reason: string | null,
  retryAfter: string | null,
  body: string,
) => ({ status, reason, retryAfter, echoed: null, body }) satisfies ZeroHopAnswer;

/** The answers of the hop configurations that map each reason to a text (nginx, HAProxy). */
export const TEXT_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet"),
  unknownHost: refused(404, "unknown-host", null, "unknown host"),
  badHost: refused(400, "bad-host", null, "bad host"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

/** The headers of a routed answer: all of them reach the upstream unless a proxy says otherwise. */
export const ALL_MIRROR_HEADERS = ["x-mirror-app", "x-mirror-revision", "x-mirror-upstream"];

/**
 * What the client should see through a zero-hop proxy, given the answer `/v1/route` gives for
 * the request's Host: a routed request reaches the upstream whose URL begins the App's upstream
 * (`urls`), with the App's headers; anything else is the proxy's refusal for that reason.
 */
export function expectedAnswer(
  answer: RouteAnswer,
  request: { readonly host: string; readonly path: string },
  urls: readonly string[],
  answers: RefusedAnswers,
  upstreamHeaders: readonly string[] = ALL_MIRROR_HEADERS,
): ZeroHopAnswer {
  switch (answer.outcome) {
    case "secret-unavailable":
      return answers.secretUnavailable;
    case "not-synced":
      return answers.notSynced;
    case "unknown-host":
      return answers.unknownHost;
    case "bad-host":
      return answers.badHost;
    case "routed":
      break;
  }
  const headers = answer.headers as Record<string, string>;
  const upstream = headers["x-mirror-upstream"];
  const index = urls.findIndex((u) => upstream === u || upstream === `${u}/`);
  if (upstream === undefined || index === -1) return answers.noHttpUpstream;
  return {
    status: 200,
    reason: null,
    retryAfter: null,
    body: "",
    echoed: {
      upstream: index,
      method: "GET",
      path: request.path,
      host: request.host,
      mirror: Object.fromEntries(upstreamHeaders.map((name) => [name, headers[name]!])),
      bodyBytes: 0,
      bodySha256: sha256(new Uint8Array()),
    },
  };
}

/** Caddy's answers, as its hop configuration passes the sidecar's on: no body. */
export const CADDY_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", ""),
  notSynced: refused(503, "not-synced", "1", ""),
  unknownHost: refused(404, "unknown-host", null, ""),
  badHost: refused(400, "bad-host", null, ""),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

/** The nginx configurations' answers: each reason its status and a text line. */
export const NGINX_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet\n"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet\n"),
  unknownHost: refused(404, "unknown-host", null, "unknown host\n"),
  badHost: refused(400, "bad-host", null, "bad host\n"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream\n"),
};
