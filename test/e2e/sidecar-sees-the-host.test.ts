// What of a client's request reaches the sidecar through each shipped hop configuration: the host
// it asks about, never the client's own headers (cookies, credentials), which the sidecar does not
// read. A recording hop between the real data plane and the sidecar keeps the header lines of
// every request it passes on. Caddy's `forward_auth` copies the client's headers into its
// subrequest, and 2.6 drops them only by name (`header_up -*` left 2.6.2 answering nothing), so
// it is not held to this (ADR 45).

import http from "node:http";
import { describe, expect, it } from "vitest";
import { type PlaneKind, through } from "../support/data-plane.ts";
import { shippedPlane, shippedPlaneThrough } from "../support/plane-in-front.ts";
import { HOSTS } from "../support/routing-world.ts";

/** Each configuration's subrequest: its header names, lower-cased, in order. */
const SENT: Partial<Record<PlaneKind, readonly string[]>> = {
  nginx: ["x-forwarded-host", "host"],
  // HAProxy's httpclient adds its own Accept and User-Agent.
  haproxy: ["x-forwarded-host", "host", "accept", "user-agent"],
};

/** An HTTP hop to 127.0.0.1:`target` that records the header lines of each request. */
async function startRecordingHop(target: number) {
  const seen: string[][] = [];
  const values: string[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((request, response) => {
    seen.push(request.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
    values.push(...request.rawHeaders.filter((_, i) => i % 2 === 1));
    const onward = http.request(
      {
        host: "127.0.0.1",
        port: target,
        method: request.method,
        path: request.url,
        headers: request.headers,
        agent,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    onward.on("error", () => response.destroy());
    request.pipe(onward);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    /** The header names of each request so far. */
    seen: () => seen,
    /** Every header value so far. */
    values: () => values,
    close: () =>
      new Promise<void>((r) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

for (const [kind, sent] of Object.entries(SENT) as [PlaneKind, readonly string[]][]) {
  const shipped = shippedPlane(kind);
  const binary = shipped.binary.path;
  const title = `${kind} with its shipped hop configuration, through a hop recording what the sidecar gets`;
  if (binary === undefined) {
    describe(title, () => {
      // Skipped only where the proxy binary is not installed (the title says which); CI installs
      // it (.ci/run), so there it runs.
      it.skip(`sends the sidecar the host only (${shipped.binary.missing})`, () => {});
    });
    continue;
  }

  describe(title, () => {
    const s = shippedPlaneThrough(shipped, binary, startRecordingHop);

    it("sends the sidecar the host it asks about, and none of the client's headers", async () => {
      const hop = s.between;
      const [before, valuesBefore] = [hop.seen().length, hop.values().length];
      const client = ["session=s3cr3t", "Bearer t0k3n", "client/1.0", "x"];
      const answer = await through(s.port, {
        host: HOSTS.ready,
        headers: {
          cookie: client[0]!,
          authorization: client[1]!,
          "user-agent": client[2]!,
          "x-client-header": client[3]!,
        },
      });
      expect(answer.status).toBe(200);
      expect(hop.seen().slice(before)).toEqual([sent]);
      const values = hop.values().slice(valuesBefore);
      expect(values).toContain(HOSTS.ready);
      expect(values.filter((v) => client.includes(v))).toEqual([]);
    });
  });
}
