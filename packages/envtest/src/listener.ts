/**
 * The bound HTTP(S) listener, on node:http so watch responses control their own chunking and every
 * socket can be destroyed. It can stop listening and listen again on the same port, which is how a
 * restart refuses connections while the address clients hold stays valid.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";

/** PEM key and certificate to serve https with. */
interface Tls {
  readonly key: string;
  readonly cert: string;
}

/** A bound listener. */
interface Listening {
  readonly port: number;
  /** Stops accepting connections and destroys the open ones; resolves once the port is free. */
  pause(): Promise<void>;
  /** Listens again on the same port after `pause`. */
  resume(): Promise<void>;
  /** Like `pause`, for good. Idempotent. */
  close(): Promise<void>;
}

function bind(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Listens on host:port (0: an ephemeral port) and hands every request to `onRequest`. */
export async function listen(
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
  host: string,
  port: number,
  tls: Tls | undefined,
): Promise<Listening> {
  const server: Server = tls
    ? createHttpsServer({ key: tls.key, cert: tls.cert }, onRequest)
    : createHttpServer(onRequest);
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await bind(server, port, host);
  const addr = server.address();
  const bound = typeof addr === "object" && addr !== null ? addr.port : port;
  let listening = true;
  let closed = false;
  const pause = (): Promise<void> => {
    if (!listening) return Promise.resolve();
    listening = false;
    return new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
    });
  };
  return {
    port: bound,
    pause,
    resume: async () => {
      if (listening || closed) return;
      await bind(server, bound, host);
      listening = true;
    },
    close: () => {
      closed = true;
      return pause();
    },
  };
}
