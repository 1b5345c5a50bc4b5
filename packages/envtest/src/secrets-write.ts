/**
 * POST, PUT, PATCH and DELETE of Secrets over HTTP: request options (dryRun, fieldManager,
 * fieldValidation, force), body decoding, and the answer codes the real server uses (201 on create,
 * Status on delete), in JSON or in protobuf when the client asks for it first.
 */
import { z } from "zod";
import type { Ctx } from "./context.ts";
import { decodeSecretBody, mediaTypeOf, parseDocument, type SecretInput } from "./decode.ts";
import { type DeleteOptions, deleteSecret } from "./delete.ts";
import {
  parseBool,
  readBody,
  sendError,
  sendJson,
  sendJsonParts,
  sendProtobuf,
} from "./http-io.ts";
import { listSecrets, secretListBody } from "./list.ts";
import { negotiate, SECRET_WRITES } from "./negotiate.ts";
import { decodeDeleteOptionsProto, decodeEnvelope } from "./protobuf.ts";
import { encodeStatus, envelopeParts, secretListProtoParts } from "./protobuf-encode.ts";
import type { StoredSecret } from "./secret.ts";
import { patchSecret, patchTypeOf } from "./secret-patch.ts";
import { compileSelection } from "./selectors.ts";
import { badRequest, failWith, type OrStatus, ok } from "./status.ts";
import { createSecret, updateSecret } from "./writes.ts";

interface Common {
  readonly dryRun: boolean;
  readonly manager: string;
  readonly validation: "Strict" | "Warn" | "Ignore";
}

/**
 * The options every write shares, from the query string (and the User-Agent for the default
 * manager).
 */
function commonOptions(ctx: Ctx): OrStatus<Common> {
  const q = ctx.query;
  const dryRun = ctx.url.searchParams.getAll("dryRun");
  if (dryRun.some((d) => d !== "All"))
    return failWith(badRequest(`Invalid dry run value: ${dryRun.join(",")}`));
  const validation = q.fieldValidation ?? "Warn";
  if (validation !== "Strict" && validation !== "Warn" && validation !== "Ignore") {
    return failWith(
      badRequest(
        `fieldValidation: Unsupported value: "${validation}": supported values: "Ignore", "Strict", "Warn"`,
      ),
    );
  }
  const agent = ctx.req.headers["user-agent"] ?? "";
  const manager = q.fieldManager ?? (agent.split("/")[0] || "unknown");
  if (manager.length > 128)
    return failWith(badRequest("fieldManager: Too long: may not be more than 128 bytes"));
  return ok({ dryRun: dryRun.length > 0, manager, validation });
}

/** Strict refuses unknown fields with 400; Warn answers them in Warning headers. */
function checkUnknown(c: Common, unknown: readonly string[]): OrStatus<Record<string, string[]>> {
  if (unknown.length === 0 || c.validation === "Ignore") return ok({});
  if (c.validation === "Strict") {
    return failWith(
      badRequest(`strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(", ")}`),
    );
  }
  return ok({ Warning: unknown.map((f) => `299 - "unknown field \\"${f}\\""`) });
}

/** Whether the client asked for protobuf first (anything else it accepts is answered JSON). */
function wantsProtobuf(ctx: Ctx): boolean {
  return negotiate(ctx.req.headers.accept, SECRET_WRITES) === "protobuf";
}

/** Answers the Secret a write stored, with the write's warnings. */
function answer(
  ctx: Ctx,
  code: number,
  stored: StoredSecret,
  headers: Record<string, string[]>,
): void {
  for (const [k, v] of Object.entries(headers)) ctx.res.setHeader(k, v);
  if (wantsProtobuf(ctx)) sendProtobuf(ctx.res, code, envelopeParts("Secret", [stored.proto]));
  else sendJson(ctx.res, code, stored.json);
}

/**
 * The shared steps of a create and an update: options, body, decoding, field validation, the write
 * itself, then the answer with its warnings.
 */
async function writeWholeSecret(
  ctx: Ctx,
  code: number,
  write: (input: SecretInput, options: Common) => ReturnType<typeof createSecret>,
): Promise<void> {
  const c = commonOptions(ctx);
  if (!c.ok) return sendError(ctx.res, c.failure);
  const body = await readBody(ctx.req);
  if (!body.ok) return sendError(ctx.res, body.failure);
  const decoded = decodeSecretBody(body.value, ctx.req.headers["content-type"]);
  if (!decoded.ok) return sendError(ctx.res, decoded.failure);
  const warn = checkUnknown(c.value, decoded.value.unknownFields);
  if (!warn.ok) return sendError(ctx.res, warn.failure);
  const r = write(decoded.value.input, c.value);
  if (!r.ok) return sendError(ctx.res, r.failure);
  answer(ctx, code, r.value.stored, warn.value);
}

/** POST /api/v1/namespaces/{ns}/secrets. */
export function createSecretHandler(ctx: Ctx, namespace: string): Promise<void> {
  return writeWholeSecret(ctx, 201, (input, options) =>
    createSecret(ctx.state, namespace, input, options),
  );
}

/** PUT /api/v1/namespaces/{ns}/secrets/{name}. */
export function updateSecretHandler(ctx: Ctx, namespace: string, name: string): Promise<void> {
  return writeWholeSecret(ctx, 200, (input, options) =>
    updateSecret(ctx.state, namespace, name, input, options),
  );
}

/** PATCH /api/v1/namespaces/{ns}/secrets/{name}, every patch type including server-side apply. */
export async function patchSecretHandler(ctx: Ctx, namespace: string, name: string): Promise<void> {
  const c = commonOptions(ctx);
  if (!c.ok) return sendError(ctx.res, c.failure);
  const type = patchTypeOf(ctx.req.headers["content-type"]);
  if (!type.ok) return sendError(ctx.res, type.failure);
  if (type.value === "apply" && ctx.query.fieldManager === undefined) {
    return sendError(
      ctx.res,
      badRequest("PATCH, application/apply-patch+yaml requires fieldManager to be set"),
    );
  }
  const force = parseBool(ctx.query.force) === true;
  if (force && type.value !== "apply")
    return sendError(
      ctx.res,
      badRequest("force: Forbidden: may not be specified for non-apply patch"),
    );
  const body = await readBody(ctx.req);
  if (!body.ok) return sendError(ctx.res, body.failure);
  const r = patchSecret(ctx.state, namespace, name, body.value, type.value, { ...c.value, force });
  if (!r.ok) return sendError(ctx.res, r.failure);
  const warn = checkUnknown(c.value, r.value.unknownFields);
  if (!warn.ok) return sendError(ctx.res, warn.failure);
  answer(ctx, r.value.result.created ? 201 : 200, r.value.result.stored, warn.value);
}

const deleteOptionsSchema = z.object({
  preconditions: z
    .object({ uid: z.string().nullish(), resourceVersion: z.string().nullish() })
    .nullish(),
  dryRun: z.array(z.string()).nullish(),
});

/** DeleteOptions from the body (JSON or protobuf) and the query string. */
async function deleteOptions(ctx: Ctx): Promise<OrStatus<DeleteOptions>> {
  const body = await readBody(ctx.req);
  if (!body.ok) return body;
  const queryDryRun = ctx.url.searchParams.getAll("dryRun").includes("All");
  if (body.value.length === 0) return ok({ dryRun: queryDryRun });
  const media = mediaTypeOf(ctx.req.headers["content-type"]);
  if (!media.ok) return media;
  if (media.value === "protobuf") {
    const env = decodeEnvelope(body.value);
    if (!env.ok) return env;
    const o = decodeDeleteOptionsProto(env.value.raw);
    if (!o.ok) return o;
    return ok({
      preconditions: o.value.preconditions,
      dryRun: queryDryRun || (o.value.dryRun ?? []).includes("All"),
    });
  }
  const doc = parseDocument(body.value, media.value);
  if (!doc.ok) return doc;
  const parsed = deleteOptionsSchema.safeParse(doc.value);
  if (!parsed.success)
    return failWith(
      badRequest(`DeleteOptions could not be decoded: ${parsed.error.issues[0]?.message ?? ""}`),
    );
  const pre = parsed.data.preconditions;
  return ok({
    preconditions: pre
      ? { uid: pre.uid ?? undefined, resourceVersion: pre.resourceVersion ?? undefined }
      : undefined,
    dryRun: queryDryRun || (parsed.data.dryRun ?? []).includes("All"),
  });
}

/** DELETE /api/v1/namespaces/{ns}/secrets/{name}: answers the Success Status. */
export async function deleteSecretHandler(
  ctx: Ctx,
  namespace: string,
  name: string,
): Promise<void> {
  const o = await deleteOptions(ctx);
  if (!o.ok) return sendError(ctx.res, o.failure);
  const r = deleteSecret(ctx.state, namespace, name, o.value);
  if (!r.ok) return sendError(ctx.res, r.failure);
  if (wantsProtobuf(ctx))
    return sendProtobuf(ctx.res, 200, envelopeParts("Status", [encodeStatus(r.value.status)]));
  sendJson(ctx.res, 200, r.value.status);
}

/** DELETE on a collection: deletes every selected Secret, answers the list of what it deleted. */
export async function deleteCollectionHandler(
  ctx: Ctx,
  namespace: string | undefined,
): Promise<void> {
  const o = await deleteOptions(ctx);
  if (!o.ok) return sendError(ctx.res, o.failure);
  const sel = compileSelection(namespace, ctx.query.labelSelector, ctx.query.fieldSelector);
  if (!sel.ok) return sendError(ctx.res, sel.failure);
  const page = listSecrets(ctx.state, { namespace, matches: sel.value.matches, filtered: true });
  if (!page.ok) return sendError(ctx.res, page.failure);
  const items: StoredSecret[] = [];
  for (const s of page.value.items) {
    const r = deleteSecret(ctx.state, s.obj.metadata.namespace, s.obj.metadata.name, {
      dryRun: o.value.dryRun ?? false,
    });
    if (r.ok) items.push(s);
  }
  ctx.record.sent(items.length, 0);
  const meta = { rv: ctx.state.resourceVersion };
  if (wantsProtobuf(ctx)) {
    const protos = items.map((s) => s.proto);
    return sendProtobuf(ctx.res, 200, secretListProtoParts(meta, protos));
  }
  const json = items.map((s) => s.item);
  sendJsonParts(ctx.res, 200, secretListBody(meta, json));
}
