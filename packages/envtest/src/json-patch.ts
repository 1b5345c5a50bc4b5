/**
 * JSON Patch (RFC 6902) over plain JSON values, with JSON Pointer (RFC 6901) paths. A malformed
 * document is a 400 and an operation that does not apply a 422, as the real server answers.
 */
import { z } from "zod";
import { isObject } from "./patch.ts";
import { badRequest, failWith, type OrStatus, ok, unprocessable } from "./status.ts";

const operation = z.discriminatedUnion("op", [
  z.object({ op: z.literal("add"), path: z.string(), value: z.unknown() }),
  z.object({ op: z.literal("replace"), path: z.string(), value: z.unknown() }),
  z.object({ op: z.literal("test"), path: z.string(), value: z.unknown() }),
  z.object({ op: z.literal("remove"), path: z.string() }),
  z.object({ op: z.literal("move"), path: z.string(), from: z.string() }),
  z.object({ op: z.literal("copy"), path: z.string(), from: z.string() }),
]);
const patchDocument = z.array(operation);
type Operation = z.infer<typeof operation>;

function doesNotApply(message: string): OrStatus<never> {
  return failWith(unprocessable(message));
}

function pointer(p: string): OrStatus<string[]> {
  if (p === "") return ok([]);
  if (!p.startsWith("/")) return doesNotApply(`JSON pointer must start with '/': ${p}`);
  return ok(
    p
      .slice(1)
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")),
  );
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function get(doc: unknown, segs: readonly string[]): { found: boolean; value: unknown } {
  let cur: unknown = doc;
  for (const s of segs) {
    if (Array.isArray(cur)) {
      const i = Number(s);
      if (!/^\d+$/.test(s) || i >= cur.length) return { found: false, value: undefined };
      cur = cur[i];
    } else if (isObject(cur) && Object.hasOwn(cur, s)) cur = cur[s];
    else return { found: false, value: undefined };
  }
  return { found: true, value: cur };
}

/** Mutates `doc` in place; the root itself is replaced through the return value. */
function put(
  doc: unknown,
  segs: readonly string[],
  value: unknown,
  insert: boolean,
): OrStatus<unknown> {
  if (segs.length === 0) return ok(value);
  const parent = get(doc, segs.slice(0, -1));
  const last = segs.at(-1) ?? "";
  if (!parent.found) return doesNotApply(`doc is missing path: /${segs.join("/")}`);
  const p = parent.value;
  if (Array.isArray(p)) {
    const i = last === "-" ? p.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > p.length || (!insert && i === p.length)) {
      return doesNotApply(`unable to access invalid index: ${last}`);
    }
    if (insert) p.splice(i, 0, value);
    else p[i] = value;
    return ok(doc);
  }
  if (!isObject(p)) return doesNotApply(`doc is missing path: /${segs.join("/")}`);
  if (!insert && !Object.hasOwn(p, last))
    return doesNotApply(`replace operation does not apply: doc is missing key: /${segs.join("/")}`);
  p[last] = value;
  return ok(doc);
}

function remove(doc: unknown, segs: readonly string[]): OrStatus<unknown> {
  const parent = get(doc, segs.slice(0, -1));
  const last = segs.at(-1) ?? "";
  const p = parent.value;
  if (Array.isArray(p) && /^\d+$/.test(last) && Number(last) < p.length) {
    p.splice(Number(last), 1);
    return ok(doc);
  }
  if (isObject(p) && Object.hasOwn(p, last)) {
    delete p[last];
    return ok(doc);
  }
  return doesNotApply(`remove operation does not apply: doc is missing path: "/${segs.join("/")}"`);
}

function step(doc: unknown, op: Operation): OrStatus<unknown> {
  const at = pointer(op.path);
  if (!at.ok) return at;
  switch (op.op) {
    case "add":
      return put(doc, at.value, clone(op.value), true);
    case "replace":
      return put(doc, at.value, clone(op.value), false);
    case "remove":
      return remove(doc, at.value);
    case "test": {
      const cur = get(doc, at.value);
      return cur.found && JSON.stringify(cur.value) === JSON.stringify(op.value)
        ? ok(doc)
        : doesNotApply(`testing value /${at.value.join("/")} failed: test failed`);
    }
    case "move":
    case "copy": {
      const from = pointer(op.from);
      if (!from.ok) return from;
      const src = get(doc, from.value);
      if (!src.found)
        return doesNotApply(
          `${op.op} operation does not apply: doc is missing from path: ${op.from}`,
        );
      const value = clone(src.value);
      const base = op.op === "move" ? remove(doc, from.value) : ok(doc);
      if (!base.ok) return base;
      return put(base.value, at.value, value, true);
    }
  }
}

/** Applies an RFC 6902 patch document (a JSON array of operations) to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, patch: unknown): OrStatus<unknown> {
  const ops = patchDocument.safeParse(patch);
  if (!ops.success)
    return failWith(
      badRequest(`invalid JSON patch: ${ops.error.issues[0]?.message ?? "bad document"}`),
    );
  let cur: unknown = clone(doc);
  for (const op of ops.data) {
    const next = step(cur, op);
    if (!next.ok) return next;
    cur = next.value;
  }
  return ok(cur);
}
