/**
 * JSON merge patch (RFC 7386) and strategic merge patch as it applies to a Secret: maps merge,
 * `null` deletes, and the directives kubectl emits (`$patch`, `$retainKeys`, `$setElementOrder/…`,
 * `$deleteFromPrimitiveList/…`) are honoured or stripped; `metadata.finalizers` merges as a set.
 */

type JsonObject = { [k: string]: unknown };

/** Whether `v` is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** RFC 7386: objects merge recursively, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * Lists whose strategy is `merge` in the Secret schema: their elements union instead of replacing.
 */
const MERGE_LISTS = new Set(["metadata.finalizers"]);
/** Lists merged by a key field. */
const KEYED_LISTS: Readonly<Record<string, string>> = { "metadata.ownerReferences": "uid" };

const DELETE = Symbol("delete");

function mergeKeyed(current: unknown, patch: readonly unknown[], key: string): unknown[] {
  const out = Array.isArray(current) ? [...current] : [];
  for (const item of patch) {
    if (!isObject(item)) continue;
    const idx = out.findIndex((c) => isObject(c) && c[key] === item[key]);
    if (item.$patch === "delete") {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategic(out[idx], item, "");
    else out.push(strategic(undefined, item, ""));
  }
  return out;
}

function strategic(target: unknown, patch: unknown, at: string): unknown {
  if (!isObject(patch)) return patch;
  const directive = patch.$patch;
  if (directive === "delete") return DELETE;
  const { $patch: _p, $retainKeys: retain, ...rest } = patch;
  if (directive === "replace") return stripDirectives(rest);
  const base = isObject(target) ? target : {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(base)) {
    if (!Array.isArray(retain) || retain.includes(k)) out[k] = v;
  }
  for (const [k, v] of Object.entries(rest)) {
    const child = at === "" ? k : `${at}.${k}`;
    if (k.startsWith("$setElementOrder/")) continue;
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length);
      const list = out[field];
      if (Array.isArray(list) && Array.isArray(v)) out[field] = list.filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const keyedBy = KEYED_LISTS[child];
    if (Array.isArray(v) && MERGE_LISTS.has(child)) {
      const cur = Array.isArray(out[k]) ? (out[k] as unknown[]) : [];
      out[k] = [...cur, ...v.filter((x) => !cur.includes(x))];
    } else if (Array.isArray(v) && keyedBy !== undefined) {
      out[k] = mergeKeyed(out[k], v, keyedBy);
    } else if (isObject(v)) {
      const merged = strategic(out[k], v, child);
      if (merged === DELETE) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  return out;
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith("$")) out[k] = stripDirectives(x);
  return out;
}

/** Applies a strategic merge patch to a Secret-shaped value. */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  const out = strategic(target, patch, "");
  return out === DELETE ? {} : out;
}
