/**
 * GET, list and watch of Secrets over HTTP: as JSON, as a Table for kubectl, or as protobuf for
 * client-go (gets and lists; watches stream JSON).
 */
import type { Ctx } from "./context.ts";
import type { FeatureGates } from "./feature-gates.ts";
import type { EventType, StoreEvent } from "./history.ts";
import { parseBool, sendError, sendJson, sendJsonParts, sendProtobuf } from "./http-io.ts";
import { listSecrets, secretListBody } from "./list.ts";
import { negotiate, SECRET_READS, SECRET_WATCHES } from "./negotiate.ts";
import {
  encodeSecret,
  envelopeParts,
  secretListProtoParts,
  watchFrame,
} from "./protobuf-encode.ts";
import { type StoredSecret, storeKey } from "./secret.ts";
import { compileSelection } from "./selectors.ts";
import {
  badRequest,
  expired,
  type FieldError,
  invalidListOptions,
  notAcceptable,
  notFound,
} from "./status.ts";
import { includeObjectOf, SECRET_COLUMNS, secretRow, tableJson } from "./table.ts";
import { startWatchResponse } from "./watch-connection.ts";

/** GET /api/v1/namespaces/{ns}/secrets/{name}. */
export function getSecret(ctx: Ctx, namespace: string, name: string) {
  const repr = negotiate(ctx.req.headers.accept, SECRET_READS);
  if (repr === "none") return sendError(ctx.res, notAcceptable());
  const s = ctx.state.get(storeKey(namespace, name));
  if (s === undefined) return sendError(ctx.res, notFound("secrets", name));
  if (repr === "table") {
    const row = secretRow(s.obj, includeObjectOf(ctx.query.includeObject), ctx.state.now());
    return sendJson(
      ctx.res,
      200,
      tableJson(SECRET_COLUMNS, [row], { resourceVersion: s.obj.metadata.resourceVersion }),
    );
  }
  if (repr === "protobuf") return sendProtobuf(ctx.res, 200, envelopeParts("Secret", [s.proto]));
  sendJson(ctx.res, 200, s.json);
}

function selection(ctx: Ctx, namespace: string | undefined, name: string | undefined) {
  const byName =
    name === undefined ? "" : `metadata.name=${name.replace(/[\\,=]/g, (c) => `\\${c}`)}`;
  const fields = [ctx.query.fieldSelector ?? "", byName].filter((f) => f !== "").join(",");
  return compileSelection(namespace, ctx.query.labelSelector, fields);
}

/** GET on a collection: one page of the list. */
export function listSecretsHandler(ctx: Ctx, namespace: string | undefined) {
  const repr = negotiate(ctx.req.headers.accept, SECRET_READS);
  if (repr === "none") return sendError(ctx.res, notAcceptable());
  const sel = selection(ctx, namespace, undefined);
  if (!sel.ok) return sendError(ctx.res, sel.failure);
  const q = ctx.query;
  const page = listSecrets(ctx.state, {
    namespace,
    matches: sel.value.matches,
    filtered: sel.value.filtered,
    limit: q.limit,
    continueToken: q.continue,
    resourceVersion: q.resourceVersion,
    resourceVersionMatch: q.resourceVersionMatch,
  });
  if (!page.ok) return sendError(ctx.res, page.failure);
  ctx.record.listed(page.value.read);
  ctx.record.sent(page.value.items.length, 0);
  if (repr === "table") {
    const include = includeObjectOf(q.includeObject);
    const now = ctx.state.now();
    const meta = {
      resourceVersion: String(page.value.rv),
      ...(page.value.continueToken === undefined ? {} : { continue: page.value.continueToken }),
      ...(page.value.remainingItemCount === undefined
        ? {}
        : { remainingItemCount: page.value.remainingItemCount }),
    };
    const rows = page.value.items.map((s) => secretRow(s.obj, include, now));
    return sendJson(ctx.res, 200, tableJson(SECRET_COLUMNS, rows, meta));
  }
  if (repr === "protobuf") {
    const items = page.value.items.map((s) => s.proto);
    return sendProtobuf(ctx.res, 200, secretListProtoParts(page.value, items));
  }
  const items = page.value.items.map((s) => s.item);
  sendJsonParts(ctx.res, 200, secretListBody(page.value, items));
}

/**
 * The field errors of a watch's list options, as kube-apiserver's validateWatchOptions finds them.
 * Without allowWatchBookmarks a streaming list is still served: its initial events come, and no
 * bookmark marks their end.
 */
function watchOptionsErrors(
  match: string | undefined,
  initial: boolean | undefined,
  gates: FeatureGates,
): FieldError[] {
  const errors: FieldError[] = [];
  const forbidden = (field: string, detail: string) =>
    errors.push({ field, reason: "FieldValueForbidden", message: `Forbidden: ${detail}` });
  if (initial !== undefined) {
    if (match !== "NotOlderThan")
      forbidden(
        "resourceVersionMatch",
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
      );
    if (!gates.WatchList)
      forbidden(
        "sendInitialEvents",
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
      );
  }
  if (match) {
    if (initial === undefined)
      forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      );
    if (match !== "NotOlderThan")
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueNotSupported",
        message: `Unsupported value: "${match}": supported values: "NotOlderThan"`,
      });
  }
  return errors;
}

/**
 * GET with `watch`: streams events as newline-delimited JSON until the client leaves, a timeout, or
 * a fault.
 */
export function watchSecrets(ctx: Ctx, namespace: string | undefined, name: string | undefined) {
  const repr = negotiate(ctx.req.headers.accept, SECRET_WATCHES);
  if (repr === "none") return sendError(ctx.res, notAcceptable());
  const sel = selection(ctx, namespace, name);
  if (!sel.ok) return sendError(ctx.res, sel.failure);
  const q = ctx.query;
  const bookmarks = parseBool(q.allowWatchBookmarks) === true;
  const initial = parseBool(q.sendInitialEvents);
  const rvParam = q.resourceVersion ?? "";
  if (rvParam !== "" && !/^\d+$/.test(rvParam))
    return sendError(ctx.res, badRequest(`invalid resource version: ${rvParam}`));
  const errors = watchOptionsErrors(q.resourceVersionMatch, initial, ctx.featureGates);
  if (errors.length > 0) return sendError(ctx.res, invalidListOptions(errors));
  const timeout =
    q.timeoutSeconds !== undefined && /^\d+$/.test(q.timeoutSeconds) ? Number(q.timeoutSeconds) : 0;
  const encode =
    repr === "table"
      ? tableEncoder(ctx)
      : repr === "protobuf"
        ? protobufEncoder
        : (e: StoreEvent, as: EventType) => e.line(as);
  const addedLine =
    repr === "table"
      ? (s: StoredSecret) => tableLine(ctx, "ADDED", s.obj)
      : repr === "protobuf"
        ? (s: StoredSecret) => s.addedFrame
        : (s: StoredSecret) => s.addedLine;
  const encoding = repr === "protobuf" ? "protobuf" : "json";
  startWatchResponse(ctx.res, encoding);
  const watch = ctx.hub.open(ctx.res, ctx.record, sel.value.matches, bookmarks, encode, encoding);
  const state = ctx.state;
  const fromState =
    initial === true || (initial === undefined && (rvParam === "" || rvParam === "0"));
  if (fromState) {
    for (const key of state.sortedKeys()) {
      const s = state.get(key);
      if (s !== undefined && sel.value.matches(s.obj)) watch.push(addedLine(s));
    }
    if (initial === true) {
      ctx.record.streamedList();
      watch.bookmark(state.resourceVersion, true);
    }
  } else if (rvParam !== "" && rvParam !== "0") {
    const since = state.history.since(Number(rvParam));
    if (!since.ok) {
      watch.fail(
        expired(`too old resource version: ${since.tooOld.requested} (${since.tooOld.compactedRv})`)
          .status,
      );
      return;
    }
    watch.startAfter(Number(rvParam));
    for (const e of since.events) watch.offer(e);
  }
  if (timeout > 0) watch.endAfter(timeout * 1000, () => state.resourceVersion);
}

/** An event as a protobuf watch frame, built at most once per event and type. */
function protobufEncoder(e: StoreEvent, as: EventType): Buffer {
  return e.cached(`protobuf:${as}`, () => {
    const obj = as === "DELETED" ? e.deletedObject() : e.current?.obj;
    if (obj === undefined) return e.line(as);
    const raw = as === "DELETED" || e.current === undefined ? encodeSecret(obj) : e.current.proto;
    return watchFrame(as, "Secret", raw);
  });
}

function tableLine(ctx: Ctx, as: EventType, obj: StoredSecret["obj"]): Buffer {
  const row = secretRow(obj, includeObjectOf(ctx.query.includeObject), ctx.state.now());
  return Buffer.from(
    `{"type":"${as}","object":${tableJson(SECRET_COLUMNS, [row], { resourceVersion: obj.metadata.resourceVersion })}}\n`,
  );
}

function tableEncoder(ctx: Ctx) {
  const include = includeObjectOf(ctx.query.includeObject);
  return (e: StoreEvent, as: EventType): Buffer =>
    e.cached(`table:${include}:${as}`, () => {
      const obj = as === "DELETED" ? e.deletedObject() : e.current?.obj;
      return obj === undefined ? e.line(as) : tableLine(ctx, as, obj);
    });
}
