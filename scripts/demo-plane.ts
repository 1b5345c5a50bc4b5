// The demo's data plane and upstream, in a few lines of node:http, so that `npm run demo` shows
// an App's credential reaching its upstream without nginx, Caddy or HAProxy installed. The plane
// does per request what the shipped hop configurations do (manifests/): ask /v1/route about the
// Host; on a 200 send the request to x-mirror-upstream with x-mirror-app, and x-mirror-credential
// as the one Authorization (else the client's); never return x-mirror-credential; any other
// answer goes to the client as the sidecar gave it. Not for production: no body streaming
// limits, no timeouts, no keep-alive tuning. The upstream answers with what reached it.

import http from "node:http";
import type { AddressInfo } from "node:net";

/** A running demo server: where it listens, and how to stop it. */
export interface DemoServer {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<DemoServer> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An upstream that answers every request with its method, path and headers, Authorization too. */
export function startEchoUpstream(): Promise<DemoServer> {
  return listen(
    http.createServer((request, response) => {
      const { method, url, headers } = request;
      response.setHeader("content-type", "application/json");
      response.end(`${JSON.stringify({ received: { method, url, headers } }, null, 2)}\n`);
    }),
  );
}

/** The hop-mode data plane in front of the sidecar's data listener at `route`. */
export function startDemoPlane(route: string): Promise<DemoServer> {
  return listen(
    http.createServer(async (request, response) => {
      try {
        const host = request.headers.host ?? "";
        const answer = await fetch(`${route}/v1/route`, { headers: { "x-forwarded-host": host } });
        const upstream = answer.headers.get("x-mirror-upstream");
        if (answer.status !== 200 || upstream === null) {
          response.writeHead(answer.status, Object.fromEntries(answer.headers));
          response.end();
          return;
        }
        const headers = { ...request.headers };
        // The client's own X-Mirror-* never reach the upstream (ADR 52).
        for (const name of Object.keys(headers))
          if (name.startsWith("x-mirror-")) delete headers[name];
        headers["x-mirror-app"] = answer.headers.get("x-mirror-app") ?? "";
        const credential = answer.headers.get("x-mirror-credential");
        if (credential !== null) headers.authorization = credential;
        const onward = http.request(new URL(request.url ?? "/", upstream), {
          method: request.method,
          headers,
        });
        onward.on("response", (upstreamAnswer) => {
          const { "x-mirror-credential": _, ...back } = upstreamAnswer.headers;
          response.writeHead(upstreamAnswer.statusCode ?? 502, back);
          upstreamAnswer.pipe(response);
        });
        onward.on("error", () => response.writeHead(502).end("upstream unreachable\n"));
        request.pipe(onward);
      } catch {
        response.writeHead(502).end("routing sidecar unreachable\n");
      }
    }),
  );
}
