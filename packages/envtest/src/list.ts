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
  invalidListOptions,
  type OrStatus,
  ok,
  type StatusFailure,
  tooLargeResourceVersion,
} from "./status.ts";
import type { EnvtestState, StoreView } from "./store.ts";

/** A list request: scope, selection, paging and resourceVersion parameters as received. */
interface ListParams {
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

/**
 * How a list was read: `cache`, the watch cache's current state (resourceVersion "0", or
 * NotOlderThan without a limit); `consistent`, a quorum read of the latest state, paged; `exact`,
 * a read at a past resourceVersion from the history (Exact, a limit with a resourceVersion, or a
 * continue token).
 */
export type ListRead = "cache" | "consistent" | "exact";

/** One page, all of it read at `rv`. */
interface ListResult {
  readonly rv: number;
  readonly items: readonly StoredSecret[];
  readonly read: ListRead;
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
 * Where a list is read, per the API concepts' rules for resourceVersion, resourceVersionMatch and
 * limit, with the watch cache of kube-apiserver 1.32 in front of etcd.
 */
interface ListPlan {
  readonly rv: number;
  /** The first key to return (a continue token's position), "" for the beginning. */
  readonly start: string;
  /** 0: everything. */
  readonly limit: number;
  readonly read: ListRead;
}

function listOptionsForbidden(reason: string, message: string): StatusFailure {
  return invalidListOptions([{ field: "resourceVersionMatch", reason, message }]);
}

function planList(state: EnvtestState, p: ListParams): OrStatus<ListPlan> {
  const current = state.resourceVersion;
  const limit = p.limit !== undefined && /^\d+$/.test(p.limit) ? Number(p.limit) : 0;
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
    return ok({ rv: t.rv, start: t.start, limit, read: "exact" });
  }
  const match = p.resourceVersionMatch ?? "";
  if (match !== "" && !p.resourceVersion) {
    return failWith(
      listOptionsForbidden(
        "FieldValueForbidden",
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
      ),
    );
  }
  if (match !== "" && match !== "Exact" && match !== "NotOlderThan") {
    return failWith(
      listOptionsForbidden(
        "FieldValueNotSupported",
        `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
      ),
    );
  }
  if (!p.resourceVersion) return ok({ rv: current, start: "", limit, read: "consistent" });
  // The watch cache serves "0" whole: it cannot page, and paging there would defeat its purpose of
  // sparing etcd (kube-apiserver's shouldDelegateList).
  if (p.resourceVersion === "0") return ok({ rv: current, start: "", limit: 0, read: "cache" });
  if (!/^\d+$/.test(p.resourceVersion))
    return failWith(badRequest(`invalid resource version: ${p.resourceVersion}`));
  const n = Number(p.resourceVersion);
  if (n > current) return failWith(tooLargeResourceVersion(n, current));
  if (match === "Exact" || (match === "" && limit > 0))
    return ok({ rv: n, start: "", limit, read: "exact" });
  return ok({ rv: current, start: "", limit, read: limit > 0 ? "consistent" : "cache" });
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

/** One page of Secrets in key order (the whole list when served from the watch cache). */
export function listSecrets(state: EnvtestState, p: ListParams): OrStatus<ListResult> {
  const plan = planList(state, p);
  if (!plan.ok) return plan;
  const read = state.viewAt(plan.value.rv);
  if (!read.ok) {
    return failWith(
      p.continueToken
        ? expired(TOKEN_TOO_OLD)
        : expired(
            `too old resource version: ${read.tooOld.requested} (${read.tooOld.compactedRv})`,
          ),
    );
  }
  return ok(page(read.view, p, plan.value));
}

function page(view: StoreView, p: ListParams, plan: ListPlan): ListResult {
  const { start, limit, read } = plan;
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
  if (limit === 0 || items.length < limit) return { rv: view.rv, items, read };
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
  if (remaining === 0) return { rv: view.rv, items, read };
  const continueToken = encodeToken({ rv: view.rv, start: `${last}\u0000` });
  return p.filtered
    ? { rv: view.rv, items, read, continueToken }
    : { rv: view.rv, items, read, continueToken, remainingItemCount: remaining };
}

const COMMA = Buffer.from(",");
const ITEMS_END = Buffer.from("]}");

/**
 * A SecretList body as the pieces to write: the stored items' cached bytes are shared, never copied
 * or re-serialised, so concurrent lists of the same objects hold no copy of any of them.
 */
export function secretListBody(
  meta: {
    readonly rv: number;
    readonly continueToken?: string;
    readonly remainingItemCount?: number;
  },
  items: readonly Buffer[],
): Buffer[] {
  const m: Record<string, string | number> = { resourceVersion: String(meta.rv) };
  if (meta.continueToken !== undefined) m.continue = meta.continueToken;
  if (meta.remainingItemCount !== undefined) m.remainingItemCount = meta.remainingItemCount;
  const head = `{"kind":"SecretList","apiVersion":"v1","metadata":${JSON.stringify(m)},"items":[`;
  const parts: Buffer[] = [Buffer.from(head)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(ITEMS_END);
  return parts;
}
