/**
 * Writing Namespaces: create, PUT and every PATCH type, keeping only what a Namespace here has
 * (labels and annotations), so `kubectl create namespace` and `kubectl apply` of a Namespace
 * manifest (client- or server-side) work.
 */
import { z } from "zod";
import type { Ctx } from "./context.ts";
import { mediaTypeOf, parseDocument } from "./decode.ts";
import { readBody, sendError, sendJson } from "./http-io.ts";
import { applyJsonPatch } from "./json-patch.ts";
import { namespaceObject } from "./namespaces.ts";
import { mergePatch, strategicMergePatch } from "./patch.ts";
import { decodeEnvelope, decodeNamespaceProto } from "./protobuf.ts";
import { patchTypeOf } from "./secret-patch.ts";
import { isLabelValue, isQualifiedName } from "./selectors.ts";
import {
  alreadyExists,
  badRequest,
  cannotHandle,
  failWith,
  invalid,
  notFound,
  type OrStatus,
  ok,
} from "./status.ts";
import type { NamespaceMeta } from "./store.ts";
import { dns1123LabelErrors, type FieldError, invalidValue } from "./validation.ts";

const namespaceSchema = z.object({
  kind: z.string().nullish(),
  metadata: z
    .object({
      name: z.string().nullish(),
      labels: z.record(z.string(), z.string()).nullish(),
      annotations: z.record(z.string(), z.string()).nullish(),
    })
    .nullish(),
});

interface NamespaceInput extends NamespaceMeta {
  readonly name: string;
}

function fromValue(v: unknown): OrStatus<NamespaceInput> {
  const p = namespaceSchema.safeParse(v);
  if (!p.success) return failWith(cannotHandle("Namespace", p.error.issues[0]?.message ?? ""));
  if (p.data.kind && p.data.kind !== "Namespace")
    return failWith(
      badRequest(
        `the object provided is unrecognized (must be of type Namespace): kind ${p.data.kind}`,
      ),
    );
  const m = p.data.metadata ?? {};
  return ok({
    name: m.name ?? "",
    labels: m.labels ?? undefined,
    annotations: m.annotations ?? undefined,
  });
}

async function decodeBody(ctx: Ctx): Promise<OrStatus<NamespaceInput>> {
  const body = await readBody(ctx.req);
  if (!body.ok) return body;
  const media = mediaTypeOf(ctx.req.headers["content-type"]);
  if (!media.ok) return media;
  if (media.value === "protobuf") {
    const env = decodeEnvelope(body.value);
    const ns = env.ok ? decodeNamespaceProto(env.value.raw) : env;
    if (!ns.ok) return ns;
    const m = ns.value.metadata;
    return ok({ name: m.name ?? "", labels: m.labels, annotations: m.annotations });
  }
  const doc = parseDocument(body.value, media.value);
  return doc.ok ? fromValue(doc.value) : doc;
}

function validate(ns: NamespaceInput): FieldError[] {
  const errs = dns1123LabelErrors(ns.name).map((m) => invalidValue("metadata.name", ns.name, m));
  for (const [k, v] of Object.entries(ns.labels ?? {})) {
    if (!isQualifiedName(k))
      errs.push(
        invalidValue(
          "metadata.labels",
          k,
          "name part must consist of alphanumeric characters, '-', '_' or '.'",
        ),
      );
    if (!isLabelValue(v))
      errs.push(
        invalidValue(
          "metadata.labels",
          v,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'",
        ),
      );
  }
  return errs;
}

function store(ctx: Ctx, ns: NamespaceInput, code: number) {
  const errors = validate(ns);
  if (errors.length > 0) return sendError(ctx.res, invalid("Namespace", ns.name, errors));
  const current = ctx.state.namespace(ns.name);
  const { "kubernetes.io/metadata.name": _, ...labels } = ns.labels ?? {};
  const next: NamespaceMeta = {
    labels: Object.keys(labels).length > 0 ? labels : undefined,
    annotations:
      ns.annotations && Object.keys(ns.annotations).length > 0 ? ns.annotations : undefined,
  };
  const same =
    current !== undefined &&
    JSON.stringify(current.labels ?? {}) === JSON.stringify(next.labels ?? {}) &&
    JSON.stringify(current.annotations ?? {}) === JSON.stringify(next.annotations ?? {});
  const record = same ? current : ctx.state.putNamespace(ns.name, next);
  sendJson(ctx.res, code, namespaceObject(record));
}

/** POST /api/v1/namespaces. */
export async function createNamespace(ctx: Ctx) {
  const ns = await decodeBody(ctx);
  if (!ns.ok) return sendError(ctx.res, ns.failure);
  if (ctx.state.namespace(ns.value.name) !== undefined)
    return sendError(ctx.res, alreadyExists("namespaces", ns.value.name));
  store(ctx, ns.value, 201);
}

/** PUT /api/v1/namespaces/{name}. */
export async function updateNamespace(ctx: Ctx, name: string) {
  const ns = await decodeBody(ctx);
  if (!ns.ok) return sendError(ctx.res, ns.failure);
  if (ctx.state.namespace(name) === undefined)
    return sendError(ctx.res, notFound("namespaces", name));
  if (ns.value.name !== name)
    return sendError(
      ctx.res,
      badRequest(
        `the name of the object (${ns.value.name}) does not match the name on the URL (${name})`,
      ),
    );
  store(ctx, ns.value, 200);
}

/** PATCH /api/v1/namespaces/{name}; an apply patch merges like a strategic one and may create. */
export async function patchNamespace(ctx: Ctx, name: string) {
  const type = patchTypeOf(ctx.req.headers["content-type"]);
  if (!type.ok) return sendError(ctx.res, type.failure);
  const body = await readBody(ctx.req);
  if (!body.ok) return sendError(ctx.res, body.failure);
  const doc = parseDocument(body.value, type.value === "apply" ? "yaml" : "json");
  if (!doc.ok) return sendError(ctx.res, doc.failure);
  const current = ctx.state.namespace(name);
  if (current === undefined && type.value !== "apply")
    return sendError(ctx.res, notFound("namespaces", name));
  const base = current === undefined ? { metadata: { name } } : namespaceObject(current);
  let patched: unknown;
  if (type.value === "json") {
    const r = applyJsonPatch(base, doc.value);
    if (!r.ok) return sendError(ctx.res, r.failure);
    patched = r.value;
  } else {
    patched =
      type.value === "merge" ? mergePatch(base, doc.value) : strategicMergePatch(base, doc.value);
  }
  const ns = fromValue(patched);
  if (!ns.ok) return sendError(ctx.res, ns.failure);
  if (ns.value.name !== name)
    return sendError(
      ctx.res,
      badRequest(
        `the name of the object (${ns.value.name}) does not match the name on the URL (${name})`,
      ),
    );
  store(ctx, ns.value, current === undefined ? 201 : 200);
}
