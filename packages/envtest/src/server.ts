/**
 * Serving one request: route it, record it, apply injected latency and failures (or the down time
 * of a restart), and dispatch it to the handler of its resource and verb.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { Ctx } from "./context.ts";
import { type ControlTargets, handleControl } from "./control.ts";
import { apiGroupList, apiVersions, coreResources, SERVER_VERSION } from "./discovery.ts";
import type { FaultSettings } from "./faults.ts";
import type { FeatureGateSettings } from "./feature-gates.ts";
import {
  answerErrorsInProtobuf,
  parseBool,
  type Query,
  queryOf,
  sendError,
  sendJson,
  sendText,
} from "./http-io.ts";
import { clientOf } from "./kubeconfig.ts";
import { createNamespace, patchNamespace, updateNamespace } from "./namespace-writes.ts";
import { getNamespace, listNamespaces, watchNamespaces } from "./namespaces.ts";
import { negotiatesProtobuf } from "./negotiate.ts";
import { coreV1Document, coreV1Hash, openapiV3Index } from "./openapi.ts";
import type { RequestArrival, RequestRecord, RequestRecorder } from "./request-log.ts";
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

/** Everything requests are served from; the state may outlive the server. */
interface ServerDeps {
  readonly state: EnvtestState;
  readonly hub: WatchHub;
  readonly settings: FaultSettings;
  readonly log: RequestRecorder;
  readonly control: ControlTargets;
  readonly featureGates: FeatureGateSettings;
  /** While true (a restart's down time), every request but the control path's is answered 503. */
  readonly unavailable: () => boolean;
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

function arrivalOf(req: IncomingMessage, url: URL, r: Route, verb: Verb, q: Query): RequestArrival {
  const resource = r.kind === "secrets" || r.kind === "namespaces" ? r : undefined;
  const h = req.headers;
  return {
    method: req.method ?? "GET",
    path: url.pathname,
    query: q,
    verb,
    ...(resource === undefined ? {} : { resource: resource.kind }),
    ...(r.kind === "secrets" && r.namespace !== undefined ? { namespace: r.namespace } : {}),
    ...(resource?.name === undefined ? {} : { name: resource.name }),
    client: clientOf(h.authorization, h["user-agent"]),
    ...(q.labelSelector === undefined ? {} : { labelSelector: q.labelSelector }),
    ...(q.fieldSelector === undefined ? {} : { fieldSelector: q.fieldSelector }),
    ...(q.resourceVersion === undefined ? {} : { resourceVersion: q.resourceVersion }),
    ...(q.limit === undefined ? {} : { limit: q.limit }),
    ...(h["user-agent"] === undefined ? {} : { userAgent: h["user-agent"] }),
    ...(h["content-type"] === undefined ? {} : { contentType: h["content-type"] }),
  };
}

/** Verbs whose successful answer carries one object (a list or watch counts its own). */
const ONE_OBJECT = new Set<Verb>(["get", "create", "update", "patch", "delete"]);

/** Accounts for a response once it ends: status, body bytes (not a watch's: it counts its own). */
function recordEnd(record: RequestRecord, res: ServerResponse, verb: Verb): void {
  const status = res.headersSent ? res.statusCode : undefined;
  const length = res.getHeader("content-length");
  if (typeof length === "number" || typeof length === "string") {
    const ok = status !== undefined && status < 300;
    record.sent(ok && ONE_OBJECT.has(verb) ? 1 : 0, Number(length));
  }
  record.end(status);
}

/** Routes, records, delays or fails, then dispatches one request. */
export function createHandler(
  deps: ServerDeps,
  address: () => string,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://envtest.invalid");
    const query = queryOf(url);
    const r = route(url.pathname);
    if (r.kind === "control") return handleControl(req, res, r.action, deps.control);
    const verb = verbOf(req.method ?? "GET", r, parseBool(query.watch) === true);
    const record = deps.log.start(arrivalOf(req, url, r, verb, query), () =>
      res.headersSent ? res.statusCode : undefined,
    );
    res.on("close", () => recordEnd(record, res, verb));
    if (negotiatesProtobuf(r, verb, req.headers.accept)) answerErrorsInProtobuf(res);
    const ctx: Ctx = {
      req,
      res,
      url,
      query,
      state: deps.state,
      hub: deps.hub,
      record,
      serverAddress: address(),
      featureGates: deps.featureGates.current,
    };
    if (deps.unavailable()) {
      req.resume();
      return sendError(res, injected(503, 1));
    }
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
