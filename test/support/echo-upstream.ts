// An App's upstream for the end-to-end tests: it answers every request with what reached it, so
// a test sees through the data plane what the upstream was told. Credentials are reported as
// digests: a body that repeated them would put them in front of the client, which is what the
// tests prove never happens otherwise.

import { createHash } from "node:crypto";
import http from "node:http";

/** What reached the upstream: the request line, its Host, the App header, the body's digest. */
export interface Echoed {
  readonly method: string;
  readonly host: string | null;
  readonly app: string | null;
  /** Every `x-mirror-*` header line that arrived, by lower-case name, each value in order. */
  readonly mirror: Readonly<Record<string, readonly string[]>>;
  /** Every `Authorization` line that arrived, in order, as `authorizationDigest` of its value. */
  readonly authorization: readonly string[];
  readonly path: string;
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

/** The sha256 of `bytes` in hex, as the upstream reports a body. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** How the upstream reports an `Authorization` value: never the value itself. */
export const authorizationDigest = (value: string): string =>
  `sha256:${sha256(Buffer.from(value, "latin1")).slice(0, 16)}`;

/**
 * A response header the upstream adds to every answer, as an upstream that echoes request
 * headers back would: every shipped hop configuration must drop it before the client.
 */
export const ECHOED_CREDENTIAL_HEADER = "x-mirror-credential";

/** An App's upstream on 127.0.0.1 that answers every request with its `Echoed` JSON. */
export async function startEchoUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const mirror: Record<string, string[]> = {};
      const authorization: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!.toLowerCase();
        const value = req.rawHeaders[i + 1]!;
        if (name.startsWith("x-mirror-")) mirror[name] = [...(mirror[name] ?? []), value];
        if (name === "authorization") authorization.push(authorizationDigest(value));
      }
      const echoed: Echoed = {
        method: req.method ?? "",
        host: req.headers.host ?? null,
        app: (req.headers["x-mirror-app"] as string | undefined) ?? null,
        mirror,
        authorization,
        path: req.url ?? "",
        bodyBytes: body.length,
        bodySha256: sha256(body),
      };
      res.setHeader("content-type", "application/json");
      res.setHeader(ECHOED_CREDENTIAL_HEADER, authorization.join(", ") || "none");
      res.end(JSON.stringify(echoed));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
