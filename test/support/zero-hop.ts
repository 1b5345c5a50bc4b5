// What the zero-hop tests send and expect: echo upstreams that report what reached them (every
// `Authorization` as a digest, never its value), a raw client that sends any Host byte for byte,
// and the answers each proxy shows the client. Everything listens on 127.0.0.1. The proxies
// themselves: zero-hop-proxies.ts.

import http from "node:http";
import type { RouteAnswer } from "../../src/answers/route-answer.ts";
import { sha256 } from "./echo-upstream.ts";
import { header, RawConnection, type RawResponse } from "./raw-http.ts";

/** What reached an echo upstream. */
export interface ZeroHopEchoed {
  /** Which upstream answered: its index in `EchoUpstreams.urls`. */
  readonly upstream: number;
  readonly method: string;
  readonly path: string;
  readonly host: string | null;
  /** Every `x-mirror-*` header that arrived, by lower-case name. */
  readonly mirror: Readonly<Record<string, string>>;
  /** Every `Authorization` line that arrived, in order, as `credentialDigest` of its value. */
  readonly authorization: readonly string[];
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

export interface EchoUpstreams {
  /** `http://127.0.0.1:<port>` of each upstream. */
  readonly urls: readonly string[];
  close(): Promise<void>;
}

/**
 * How the tests show an `Authorization` value: a digest, so that a failing comparison prints no
 * credential. The value as an upstream's HTTP parser reads it: spaces and tabs around it dropped.
 */
export const credentialDigest = (value: string): string =>
  `sha256:${sha256(Buffer.from(value.replace(/^[ \t]+|[ \t]+$/g, ""), "latin1")).slice(0, 16)}`;

/**
 * A line of nginx's table body with the credential of a `c <app> <credential>` line as
 * `<credentialDigest>`: what a test compares, so that a failure prints no credential.
 */
export const redactedLine = (line: string): string =>
  line.replace(
    /^(c \S+ )(.+)$/,
    (_, head: string, value: string) => `${head}<${credentialDigest(value)}>`,
  );

/**
 * A response header every echo upstream adds, as an upstream that echoes request headers back
 * would (its value: the digests it got): every zero-hop configuration must drop it.
 */
export const ECHOED_CREDENTIAL_HEADER = "x-mirror-credential";

/**
 * `count` upstreams, each answering every request with its `ZeroHopEchoed` JSON and
 * ECHOED_CREDENTIAL_HEADER.
 */
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
          const authorization: string[] = [];
          for (let i = 0; i < req.rawHeaders.length; i += 2) {
            if (req.rawHeaders[i]!.toLowerCase() === "authorization")
              authorization.push(credentialDigest(req.rawHeaders[i + 1]!));
          }
          const echoed: ZeroHopEchoed = {
            upstream,
            method: req.method ?? "",
            path: req.url ?? "",
            host: req.headers.host ?? null,
            mirror,
            authorization,
            bodyBytes: body.length,
            bodySha256: sha256(body),
          };
          res.setHeader("content-type", "application/json");
          res.setHeader(ECHOED_CREDENTIAL_HEADER, authorization.join(", ") || "none");
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

/**
 * What the client sees: the answer's status, reason, retry-after and App (`x-mirror-app`), and
 * the upstream's report or the body.
 */
export interface ZeroHopAnswer {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfter: string | null;
  readonly app: string | null;
  readonly echoed: ZeroHopEchoed | null;
  readonly body: string;
}

/** One request on its own connection (the Host as UTF-8 bytes). */
export async function ask(port: number, request: ZeroHopRequest): Promise<ZeroHopAnswer> {
  return (await exchange(port, request)).answer;
}

/** `ask`, and the whole response the client got, every header and the body. */
export async function exchange(
  port: number,
  request: ZeroHopRequest,
): Promise<{ answer: ZeroHopAnswer; response: RawResponse }> {
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
    const answer: ZeroHopAnswer = {
      status: response.status,
      reason: header(response, "x-mirror-reason") ?? null,
      retryAfter: header(response, "retry-after") ?? null,
      app: header(response, "x-mirror-app") ?? null,
      echoed: json ? (JSON.parse(text) as ZeroHopEchoed) : null,
      body: json ? "" : text,
    };
    return { answer, response };
  } finally {
    connection.destroy();
  }
}

/** What a zero-hop proxy shows the client for each answer that is not routed. */
export interface RefusedAnswers {
  /** The three 503s of an App: with `app` null here, the App's name in an answer. */
  readonly secretUnavailable: ZeroHopAnswer;
  readonly secretUnusable: ZeroHopAnswer;
  readonly credentialsOff: ZeroHopAnswer;
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
) => ({ status, reason, retryAfter, app: null, echoed: null, body }) satisfies ZeroHopAnswer;

/** The answers of the hop configurations that map each reason to a text (nginx, HAProxy). */
export const TEXT_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet"),
  secretUnusable: refused(503, "secret-unusable", "5", "credentials not usable"),
  credentialsOff: refused(503, "credentials-off", null, "credentials not served"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet"),
  unknownHost: refused(404, "unknown-host", null, "unknown host"),
  badHost: refused(400, "bad-host", null, "bad host"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

/** The headers of a routed answer: all of them reach the upstream unless a proxy says otherwise. */
export const ALL_MIRROR_HEADERS = ["x-mirror-app", "x-mirror-revision", "x-mirror-upstream"];

/** A request as `expectedAnswer` needs it: its Host, target and the client's `Authorization`. */
export interface ExpectedRequest {
  readonly host: string;
  readonly path: string;
  readonly authorization?: string;
}

/**
 * What the client should see through a zero-hop proxy, given the answer `/v1/route` gives for
 * the request's Host: a routed request reaches the upstream whose URL begins the App's upstream
 * (`urls`), with the App's headers and, as its one `Authorization`, the App's credential
 * (`x-mirror-credential`) or else the client's own; an App's 503 is the proxy's refusal with the
 * App's name; anything else is the proxy's refusal for that reason.
 */
export function expectedAnswer(
  answer: RouteAnswer,
  request: ExpectedRequest,
  urls: readonly string[],
  answers: RefusedAnswers,
  upstreamHeaders: readonly string[] = ALL_MIRROR_HEADERS,
): ZeroHopAnswer {
  const headers = answer.headers as Record<string, string>;
  const app = headers["x-mirror-app"] ?? null;
  switch (answer.outcome) {
    case "secret-unavailable":
      return { ...answers.secretUnavailable, app };
    case "secret-unusable":
      return { ...answers.secretUnusable, app };
    case "credentials-off":
      return { ...answers.credentialsOff, app };
    case "not-synced":
      return answers.notSynced;
    case "unknown-host":
      return answers.unknownHost;
    case "bad-host":
      return answers.badHost;
    case "routed":
      break;
    default:
      throw new Error(`no zero-hop answer for ${answer.outcome}`);
  }
  const upstream = headers["x-mirror-upstream"];
  const index = urls.findIndex((u) => upstream === u || upstream === `${u}/`);
  if (upstream === undefined || index === -1) return answers.noHttpUpstream;
  const authorization = headers["x-mirror-credential"] ?? request.authorization;
  return {
    status: 200,
    reason: null,
    retryAfter: null,
    app: null,
    body: "",
    echoed: {
      upstream: index,
      method: "GET",
      path: request.path,
      host: request.host,
      mirror: Object.fromEntries(upstreamHeaders.map((name) => [name, headers[name]!])),
      authorization: authorization === undefined ? [] : [credentialDigest(authorization)],
      bodyBytes: 0,
      bodySha256: sha256(new Uint8Array()),
    },
  };
}

/** Caddy's answers, as its hop configuration passes the sidecar's on: no body. */
export const CADDY_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", ""),
  secretUnusable: refused(503, "secret-unusable", "5", ""),
  credentialsOff: refused(503, "credentials-off", null, ""),
  notSynced: refused(503, "not-synced", "1", ""),
  unknownHost: refused(404, "unknown-host", null, ""),
  badHost: refused(400, "bad-host", null, ""),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

/** The nginx configurations' answers: each reason its status and a text line. */
export const NGINX_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet\n"),
  secretUnusable: refused(503, "secret-unusable", "5", "credentials not usable\n"),
  credentialsOff: refused(503, "credentials-off", null, "credentials not served\n"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet\n"),
  unknownHost: refused(404, "unknown-host", null, "unknown host\n"),
  badHost: refused(400, "bad-host", null, "bad host\n"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream\n"),
};
