// A Unix socket that relays every connection to a proxy's push socket and records the request
// line each one starts with (`PUT /replica-mirror/table`; HAProxy's runtime API: the command's
// first line, which may hold a credential: a test keeps only its first words): the push clients
// open one connection per request (src/push/admin-http.ts, haproxy-runtime.ts), so a test sees
// how each push went, and never a body.

import net from "node:net";

export interface SocketRelay {
  /** The request lines seen so far, in the order the connections came. */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

/** Listens on `path` and relays each connection to `target`. */
export async function startSocketRelay(path: string, target: string): Promise<SocketRelay> {
  const requests: string[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect({ path: target });
    let head = "";
    const sniff = (chunk: Buffer) => {
      head += chunk.toString("latin1", 0, Math.min(chunk.length, 200));
      const end = head.indexOf("\n");
      if (end === -1 && head.length < 200) return;
      const line = head.slice(0, end === -1 ? 200 : end).replace(/\r$/, "");
      requests.push(line.replace(/ HTTP\/1\.[01]$/, ""));
      client.off("data", sniff);
    };
    client.on("data", sniff);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close);
    upstream.on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
