/**
 * Reading Namespaces, as much as kubectl needs: the implicit set (system namespaces, every
 * namespace a Secret was written to, and any created) can be read, listed and watched. They are
 * never deleted.
 */
import type { Ctx } from "./context.ts";
import { sendError, sendJson } from "./http-io.ts";
import { JSON_OR_TABLE, negotiate } from "./negotiate.ts";
import { sortedMap } from "./secret.ts";
import { notAcceptable, notFound } from "./status.ts";
import type { NamespaceRecord } from "./store.ts";
import { includeObjectOf, NAMESPACE_COLUMNS, namespaceRow, tableJson } from "./table.ts";
import { startWatchResponse } from "./watch-connection.ts";

/** A Namespace object as the real server returns it. */
export function namespaceObject(ns: NamespaceRecord) {
  return {
    kind: "Namespace",
    apiVersion: "v1",
    metadata: {
      name: ns.name,
      uid: ns.uid,
      resourceVersion: String(ns.resourceVersion),
      creationTimestamp: ns.creationTimestamp,
      labels: sortedMap({ ...ns.labels, "kubernetes.io/metadata.name": ns.name }),
      ...(ns.annotations === undefined ? {} : { annotations: sortedMap(ns.annotations) }),
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

function listItem(ns: NamespaceRecord) {
  const { kind: _k, apiVersion: _a, ...rest } = namespaceObject(ns);
  return rest;
}

/** GET /api/v1/namespaces/{name}, as JSON or a Table. */
export function getNamespace(ctx: Ctx, name: string) {
  const repr = negotiate(ctx.req.headers.accept, JSON_OR_TABLE);
  if (repr === "none") return sendError(ctx.res, notAcceptable());
  const ns = ctx.state.namespace(name);
  if (ns === undefined) return sendError(ctx.res, notFound("namespaces", name));
  const obj = namespaceObject(ns);
  if (repr === "table") {
    const row = namespaceRow(obj, includeObjectOf(ctx.query.includeObject), ctx.state.now());
    return sendJson(
      ctx.res,
      200,
      tableJson(NAMESPACE_COLUMNS, [row], { resourceVersion: obj.metadata.resourceVersion }),
    );
  }
  sendJson(ctx.res, 200, obj);
}

/** GET /api/v1/namespaces, as a NamespaceList or a Table (never paged: the set is small). */
export function listNamespaces(ctx: Ctx) {
  const repr = negotiate(ctx.req.headers.accept, JSON_OR_TABLE);
  if (repr === "none") return sendError(ctx.res, notAcceptable());
  const all = ctx.state.namespaces();
  const rv = String(ctx.state.resourceVersion);
  ctx.record.sent(all.length, 0);
  if (repr === "table") {
    const include = includeObjectOf(ctx.query.includeObject);
    const now = ctx.state.now();
    const rows = all.map((ns) => namespaceRow(namespaceObject(ns), include, now));
    return sendJson(ctx.res, 200, tableJson(NAMESPACE_COLUMNS, rows, { resourceVersion: rv }));
  }
  sendJson(ctx.res, 200, {
    kind: "NamespaceList",
    apiVersion: "v1",
    metadata: { resourceVersion: rv },
    items: all.map(listItem),
  });
}

/** A watch that reports the current namespaces, then stays open without further events. */
export function watchNamespaces(ctx: Ctx) {
  startWatchResponse(ctx.res);
  const watch = ctx.hub.open(
    ctx.res,
    ctx.record,
    () => false,
    false,
    (e, as) => e.line(as),
  );
  for (const ns of ctx.state.namespaces()) {
    watch.push(Buffer.from(`{"type":"ADDED","object":${JSON.stringify(namespaceObject(ns))}}\n`));
  }
}
