/**
 * Content negotiation: which representation a client's Accept header lets an endpoint answer with,
 * chosen as kube-apiserver chooses it (the first acceptable media range, ranges ordered by quality
 * and specificity).
 */
import { PROTOBUF_MEDIA_TYPE } from "./protobuf-encode.ts";
import type { Route, Verb } from "./routes.ts";

/** What representation an answer takes; `none` when the client accepts nothing offered. */
export type Representation = "json" | "table" | "protobuf" | "none";

/** What an endpoint can answer in besides JSON. */
export interface Offers {
  /** A meta.k8s.io/v1 Table (kubectl get). */
  readonly table: boolean;
  readonly protobuf: boolean;
}

/** Secret gets and lists: Tables for kubectl, protobuf for client-go. */
export const SECRET_READS: Offers = { table: true, protobuf: true };
/** Secret writes answer the object (or Status) they wrote. */
export const SECRET_WRITES: Offers = { table: false, protobuf: true };
/**
 * Secret watches: protobuf frames (`;stream=watch`) for client-go, as kube-apiserver streams any
 * type with a protobuf serializer; Tables for kubectl.
 */
export const SECRET_WATCHES: Offers = { table: true, protobuf: true };
/**
 * Namespaces and the rest: JSON, or a Table where the handler builds one; a client asking for
 * protobuf first gets its second choice, JSON.
 */
export const JSON_OR_TABLE: Offers = { table: true, protobuf: false };

interface MediaRange {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

/** How unspecific a range is: `*\/*` 2, `type/*` 1, `type/subtype` 0. */
function wildness(type: string): number {
  if (type === "*/*") return 2;
  return type.endsWith("/*") ? 1 : 0;
}

/**
 * Splits an Accept header into media ranges, ordered as goautoneg orders them for the API server:
 * higher quality first, then concrete types before wildcards, otherwise as the client listed them.
 */
function parseAccept(accept: string | undefined): MediaRange[] {
  const ranges = (accept ?? "")
    .split(",")
    .map((part) => {
      const [type = "", ...params] = part.split(";").map((s) => s.trim());
      const p = Object.fromEntries(
        params.map((kv) => {
          const i = kv.indexOf("=");
          return i < 0 ? [kv, ""] : [kv.slice(0, i).trim(), kv.slice(i + 1).trim()];
        }),
      );
      const q = p.q === undefined ? 1 : Number.parseFloat(p.q);
      return { type: type.toLowerCase(), params: p, q: Number.isNaN(q) ? 1 : q };
    })
    .filter((m) => m.type !== "");
  return ranges.sort((a, b) => b.q - a.q || wildness(a.type) - wildness(b.type));
}

/**
 * Picks the first acceptable representation: protobuf where offered, a Table when asked for one
 * and offered, plain JSON otherwise (`*\/*` and `application/*` mean JSON, the server's first
 * serializer).
 */
export function negotiate(accept: string | undefined, offers: Offers): Representation {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return "json";
  for (const r of ranges) {
    if (r.type === PROTOBUF_MEDIA_TYPE) {
      if (offers.protobuf && r.params.as === undefined) return "protobuf";
      continue;
    }
    const isJson = r.type === "application/json" || r.type === "*/*" || r.type === "application/*";
    if (!isJson) continue;
    const as = r.params.as;
    if (as === undefined) return "json";
    if (as === "Table" && offers.table && r.params.g === "meta.k8s.io" && r.params.v === "v1")
      return "table";
  }
  return "none";
}

/** What the endpoint a request reaches offers. */
function offersFor(r: Route, verb: Verb): Offers {
  if (r.kind === "secrets" && verb === "watch") return SECRET_WATCHES;
  if (r.kind !== "secrets" || r.watchPath) return JSON_OR_TABLE;
  switch (verb) {
    case "get":
    case "list":
      return SECRET_READS;
    case "create":
    case "update":
    case "patch":
    case "delete":
    case "deletecollection":
      return SECRET_WRITES;
    default:
      return JSON_OR_TABLE;
  }
}

/**
 * Whether a request negotiates protobuf at the endpoint it reaches: then its errors are protobuf
 * Status bodies too, as responsewriters.ErrorNegotiated answers them.
 */
export function negotiatesProtobuf(r: Route, verb: Verb, accept: string | undefined): boolean {
  return negotiate(accept, offersFor(r, verb)) === "protobuf";
}
