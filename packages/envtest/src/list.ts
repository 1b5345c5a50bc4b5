/**
 * Lists with the API server's resourceVersion semantics and `limit`/`continue` paging: every page
 * of one list is served from the same resourceVersion, rebuilt from the event history, so writes
 * between pages never show up.
 */

import { compareBytes, type StoredSecret } from "./secret.ts";
import type { Predicate } from "./selectors.ts";
import {
  badRequest,
  expired,
  failWith,
  invalid,
  type OrStatus,
  ok,
  tooLargeResourceVersion,
} from "./status.ts";
import type { EnvtestState, StoreView } from "./store.ts";

/** A list request: scope, selection, paging and resourceVersion parameters as received. */
export interface ListParams {
  readonly namespace?: string | undefined;
  readonly matches: Predicate;
  /**
   * Whether a label or field selector narrows the list (then remainingItemCount is not reported).
   */
  readonly filtered: boolean;
  readonly limit?: string | undefined;
  readonly continueToken?: string | undefined;
  readonly resourceVersion?: string | undefined;
  readonly resourceVersionMatch?: string | undefined;
}

/** One page, all of it read at `rv`. */
export interface ListResult {
  readonly rv: number;
  readonly items: readonly StoredSecret[];
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

function encodeToken(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: t.rv, start: t.start })).toString(
    "base64url",
  );
}

function decodeToken(s: string): ContinueToken | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    if (typeof v !== "object" || v === null) return undefined;
    const { v: version, rv, start } = v as Record<string, unknown>;
    if (version !== "meta.k8s.io/v1" || typeof rv !== "number" || typeof start !== "string")
      return undefined;
    return { rv, start };
  } catch {
    return undefined;
  }
}

const TOKEN_TOO_OLD =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/**
 * Which resourceVersion a list reads at, per the API concepts' rules for resourceVersion and
 * resourceVersionMatch.
 */
function readRv(
  state: EnvtestState,
  p: ListParams,
  limited: boolean,
): OrStatus<{ rv: number; start: string }> {
  const current = state.resourceVersion;
  if (p.continueToken) {
    if (p.resourceVersion && p.resourceVersion !== "0") {
      return failWith(badRequest("specifying resource version is not allowed when using continue"));
    }
    const t = decodeToken(p.continueToken);
    if (t === undefined)
      return failWith(
        badRequest(
          "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
      );
    return ok({ rv: t.rv, start: t.start });
  }
  const match = p.resourceVersionMatch ?? "";
  if (match !== "" && !p.resourceVersion) {
    return failWith(
      invalid("ListOptions", "", [
        {
          field: "resourceVersionMatch",
          reason: "FieldValueForbidden",
          message:
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        },
      ]),
    );
  }
  if (match !== "" && match !== "Exact" && match !== "NotOlderThan") {
    return failWith(
      invalid("ListOptions", "", [
        {
          field: "resourceVersionMatch",
          reason: "FieldValueNotSupported",
          message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
        },
      ]),
    );
  }
  if (!p.resourceVersion || p.resourceVersion === "0") return ok({ rv: current, start: "" });
  if (!/^\d+$/.test(p.resourceVersion))
    return failWith(badRequest(`invalid resource version: ${p.resourceVersion}`));
  const n = Number(p.resourceVersion);
  if (n > current) return failWith(tooLargeResourceVersion(n, current));
  const exact = match === "Exact" || (match === "" && limited);
  return ok({ rv: exact ? n : current, start: "" });
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(keys[mid] ?? "", key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One page of Secrets in key order. */
export function listSecrets(state: EnvtestState, p: ListParams): OrStatus<ListResult> {
  const limit = p.limit !== undefined && /^\d+$/.test(p.limit) ? Number(p.limit) : 0;
  const at = readRv(state, p, limit > 0);
  if (!at.ok) return at;
  const read = state.viewAt(at.value.rv);
  if (!read.ok) {
    return failWith(
      p.continueToken
        ? expired(TOKEN_TOO_OLD)
        : expired(
            `too old resource version: ${read.tooOld.requested} (${read.tooOld.compactedRv})`,
          ),
    );
  }
  return ok(page(read.view, p, at.value.start, limit));
}

function page(view: StoreView, p: ListParams, start: string, limit: number): ListResult {
  const prefix = p.namespace === undefined ? "" : `${p.namespace}/`;
  const keys = view.keys;
  let i = lowerBound(keys, compareBytes(start, prefix) > 0 ? start : prefix);
  const items: StoredSecret[] = [];
  let last = "";
  for (; i < keys.length; i++) {
    const key = keys[i] ?? "";
    if (!key.startsWith(prefix)) break;
    const s = view.get(key);
    if (s === undefined || !p.matches(s.obj)) continue;
    if (limit > 0 && items.length === limit) break;
    items.push(s);
    last = key;
  }
  if (limit === 0 || items.length < limit) return { rv: view.rv, items };
  let remaining = 0;
  for (; i < keys.length; i++) {
    const key = keys[i] ?? "";
    if (!key.startsWith(prefix)) break;
    const s = view.get(key);
    if (s !== undefined && p.matches(s.obj)) {
      remaining++;
      if (p.filtered) break;
    }
  }
  if (remaining === 0) return { rv: view.rv, items };
  const continueToken = encodeToken({ rv: view.rv, start: `${last}\u0000` });
  return p.filtered
    ? { rv: view.rv, items, continueToken }
    : { rv: view.rv, items, continueToken, remainingItemCount: remaining };
}

/** Serialises a SecretList from the stored strings, without re-serialising any item. */
export function secretListJson(pageResult: ListResult): string {
  const meta: Record<string, string | number> = { resourceVersion: String(pageResult.rv) };
  if (pageResult.continueToken !== undefined) meta.continue = pageResult.continueToken;
  if (pageResult.remainingItemCount !== undefined)
    meta.remainingItemCount = pageResult.remainingItemCount;
  const items = pageResult.items.map((s) => s.itemJson).join(",");
  return `{"kind":"SecretList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[${items}]}`;
}
