/**
 * The HTTP(S) listener: routes each request, records it, applies injected latency and failures, and
 * dispatches to the handlers. Built on node:http so watch responses control their own chunking and
 * sockets can be destroyed.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { Ctx } from "./context.ts";
import { handleControl } from "./control.ts";
import { apiGroupList, apiVersions, coreResources, SERVER_VERSION } from "./discovery.ts";
import type { FaultSettings, Faults } from "./faults.ts";
import { parseBool, queryOf, sendError, sendJson, sendText } from "./http-io.ts";
import { createNamespace, patchNamespace, updateNamespace } from "./namespace-writes.ts";
import { getNamespace, listNamespaces, watchNamespaces } from "./namespaces.ts";
import { coreV1Document, coreV1Hash, openapiV3Index } from "./openapi.ts";
import type { RequestRecorder } from "./request-log.ts";
import { type Route, route, type Verb, verbOf } from "./routes.ts";
import { getSecret, listSecretsHandler, watchSecrets } from "./secrets-read.ts";
import {
  createSecretHandler,
  deleteCollectionHandler,
  deleteSecretHandler,
  patchSecretHandler,
  updateSecretHandler,
} from "./secrets-write.ts";
import { injected, methodNotAllowed, pathNotFound } from "./status.ts";
import type { EnvtestState } from "./store.ts";
import type { WatchHub } from "./watch-hub.ts";

/** Everything a listener serves from; the state may outlive the listener. */
export interface ServerDeps {
  readonly state: EnvtestState;
  readonly hub: WatchHub;
  readonly settings: FaultSettings;
  readonly faults: Faults;
  readonly log: RequestRecorder;
  readonly tls?: { readonly key: string; readonly cert: string } | undefined;
}

/** A bound listener. */
export interface Listening {
  readonly port: number;
  /** Destroys every open connection and resolves once the port is free. */
  close(): Promise<void>;
}

const API_VERBS = new Set<Verb>([
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
]);

async function dispatchSecrets(
  ctx: Ctx,
  r: Extract<Route, { kind: "secrets" }>,
  verb: Verb,
): Promise<void> {
  const { namespace, name } = r;
  if (verb === "watch") return watchSecrets(ctx, namespace, name);
  if (r.watchPath) return sendError(ctx.res, methodNotAllowed());
  if (namespace === undefined) {
    if (verb === "list") return listSecretsHandler(ctx, undefined);
    return sendError(ctx.res, methodNotAllowed());
  }
  switch (verb) {
    case "get":
      return getSecret(ctx, namespace, name ?? "");
    case "list":
      return listSecretsHandler(ctx, namespace);
    case "create":
      return createSecretHandler(ctx, namespace);
    case "update":
      return updateSecretHandler(ctx, namespace, name ?? "");
    case "patch":
      return patchSecretHandler(ctx, namespace, name ?? "");
    case "delete":
      return deleteSecretHandler(ctx, namespace, name ?? "");
    case "deletecollection":
      return deleteCollectionHandler(ctx, namespace);
    default:
      return sendError(ctx.res, methodNotAllowed());
  }
}

async function dispatch(ctx: Ctx, r: Route, verb: Verb): Promise<void> {
  switch (r.kind) {
    case "health":
      return sendText(ctx.res, 200, "ok");
    case "version":
      return sendJson(ctx.res, 200, SERVER_VERSION);
    case "api":
      return sendJson(ctx.res, 200, apiVersions(ctx.serverAddress));
    case "apis":
      return sendJson(ctx.res, 200, apiGroupList);
    case "resources":
      return sendJson(ctx.res, 200, coreResources);
    case "openapi":
      if (r.doc === "v3") return sendJson(ctx.res, 200, openapiV3Index);
      if (r.doc === "v3-core")
        return sendJson(ctx.res, 200, coreV1Document, { Etag: `"${coreV1Hash}"` });
      return sendText(ctx.res, 404, "404 page not found\n");
    case "secrets":
      return dispatchSecrets(ctx, r, verb);
    case "namespaces":
      if (verb === "watch") return watchNamespaces(ctx);
      if (verb === "get") return getNamespace(ctx, r.name ?? "");
      if (verb === "list") return listNamespaces(ctx);
      if (verb === "create") return createNamespace(ctx);
      if (verb === "update") return updateNamespace(ctx, r.name ?? "");
      if (verb === "patch") return patchNamespace(ctx, r.name ?? "");
      return sendError(ctx.res, methodNotAllowed());
    case "unknown":
      return r.api
        ? sendError(ctx.res, pathNotFound())
        : sendText(ctx.res, 404, "404 page not found\n");
    case "control":
      return;
  }
}

function handler(deps: ServerDeps, address: () => string) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://envtest.invalid");
    const query = queryOf(url);
    const r = route(url.pathname);
    const ctx: Ctx = {
      req,
      res,
      url,
      query,
      state: deps.state,
      hub: deps.hub,
      settings: deps.settings,
      serverAddress: address(),
    };
    if (r.kind === "control") return handleControl(ctx, r.action, deps.faults, deps.log);
    const method = req.method ?? "GET";
    const verb = verbOf(method, r, parseBool(query.watch) === true);
    const seen: { res?: ServerResponse; status?: number } = { res };
    res.on("close", () => {
      seen.status = res.headersSent ? res.statusCode : undefined;
      seen.res = undefined;
    });
    deps.log.record(
      {
        method,
        path: url.pathname,
        query,
        verb,
        ...(r.kind === "secrets" || r.kind === "namespaces" ? { resource: r.kind } : {}),
        ...(r.kind === "secrets" && r.namespace !== undefined ? { namespace: r.namespace } : {}),
        ...((r.kind === "secrets" || r.kind === "namespaces") && r.name !== undefined
          ? { name: r.name }
          : {}),
        time: Date.now(),
        ...(req.headers["user-agent"] === undefined
          ? {}
          : { userAgent: req.headers["user-agent"] }),
        ...(req.headers["content-type"] === undefined
          ? {}
          : { contentType: req.headers["content-type"] }),
      },
      () => seen.status ?? (seen.res?.headersSent ? seen.res.statusCode : undefined),
    );
    if (deps.settings.latencyMs > 0) await delay(deps.settings.latencyMs);
    if (API_VERBS.has(verb)) {
      const failure = deps.settings.takeFailure(verb);
      if (failure !== undefined) {
        req.resume();
        return sendError(res, failure);
      }
    }
    await dispatch(ctx, r, verb);
  };
}

/** Starts listening on host:port (0 for an ephemeral port). */
export async function listen(deps: ServerDeps, host: string, port: number): Promise<Listening> {
  let actualPort = port;
  const handle = handler(deps, () => `${host}:${actualPort}`);
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((e: unknown) => {
      const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
      process.emitWarning(`envtest handler failed: ${message}`);
      if (!res.headersSent) sendError(res, injected(500));
      else res.destroy();
    });
  };
  const server: Server = deps.tls
    ? createHttpsServer({ key: deps.tls.key, cert: deps.tls.cert }, onRequest)
    : createHttpServer(onRequest);
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  actualPort = typeof addr === "object" && addr !== null ? addr.port : port;
  return {
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        deps.hub.close();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}
