/**
 * URL paths of the Kubernetes API (and the control path beside it) to routes, and requests to API
 * verbs.
 */

export type Route =
  | { readonly kind: "health"; readonly check: string }
  | { readonly kind: "version" }
  | { readonly kind: "api" }
  | { readonly kind: "apis" }
  | { readonly kind: "resources" }
  | { readonly kind: "openapi"; readonly doc: "v2" | "v3" | "v3-core" }
  | {
      readonly kind: "secrets";
      readonly namespace?: string;
      readonly name?: string;
      readonly watchPath: boolean;
    }
  | { readonly kind: "namespaces"; readonly name?: string; readonly watchPath: boolean }
  | { readonly kind: "control"; readonly action: string }
  | { readonly kind: "unknown"; readonly api: boolean };

/**
 * The prefix of the fault-injection and request-log endpoints, outside the Kubernetes URL space.
 */
const CONTROL_PREFIX = "/__envtest/";

const HEALTH = new Set(["healthz", "readyz", "livez"]);

/**
 * A malformed escape stays as written: it then matches no route rather than failing the request.
 */
function decodeSegment(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

/** Maps a URL path to a route; never throws. */
export function route(pathname: string): Route {
  if (pathname.startsWith(CONTROL_PREFIX))
    return { kind: "control", action: pathname.slice(CONTROL_PREFIX.length) };
  const parts = pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeSegment);
  const [a, b, ...rest] = parts;
  if (a !== undefined && HEALTH.has(a)) return { kind: "health", check: parts.join("/") };
  if (a === "version" && parts.length === 1) return { kind: "version" };
  if (a === "apis" && parts.length === 1) return { kind: "apis" };
  if (a === "openapi") {
    if (b === "v2" && parts.length === 2) return { kind: "openapi", doc: "v2" };
    if (b === "v3" && parts.length === 2) return { kind: "openapi", doc: "v3" };
    if (b === "v3" && rest.join("/") === "api/v1") return { kind: "openapi", doc: "v3-core" };
    return { kind: "unknown", api: false };
  }
  if (a !== "api") return { kind: "unknown", api: a === "apis" };
  if (b === undefined) return { kind: "api" };
  if (b !== "v1") return { kind: "unknown", api: true };
  if (rest.length === 0) return { kind: "resources" };
  const watchPath = rest[0] === "watch";
  const r = watchPath ? rest.slice(1) : rest;
  if (r[0] === "secrets" && r.length === 1) return { kind: "secrets", watchPath };
  if (r[0] === "namespaces") {
    if (r.length <= 2)
      return { kind: "namespaces", ...(r[1] === undefined ? {} : { name: r[1] }), watchPath };
    if (r[2] === "secrets" && r.length <= 4) {
      return {
        kind: "secrets",
        namespace: r[1] ?? "",
        ...(r[3] === undefined ? {} : { name: r[3] }),
        watchPath,
      };
    }
  }
  return { kind: "unknown", api: true };
}

/** API verbs, plus the kinds of non-resource request (discovery, openapi, health, control). */
export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection"
  | "discovery"
  | "openapi"
  | "health"
  | "control"
  | "unknown";

/** Classifies a request the way the API server's RequestInfo does (plus non-resource kinds). */
export function verbOf(method: string, r: Route, watchParam: boolean): Verb {
  switch (r.kind) {
    case "health":
      return "health";
    case "version":
    case "api":
    case "apis":
    case "resources":
      return "discovery";
    case "openapi":
      return "openapi";
    case "control":
      return "control";
    case "unknown":
      return "unknown";
    default:
      break;
  }
  const item = r.name !== undefined;
  switch (method) {
    case "GET":
    case "HEAD":
      if (r.watchPath || watchParam) return "watch";
      return item ? "get" : "list";
    case "POST":
      return item ? "unknown" : "create";
    case "PUT":
      return item ? "update" : "unknown";
    case "PATCH":
      return item ? "patch" : "unknown";
    case "DELETE":
      return item ? "delete" : "deletecollection";
    default:
      return "unknown";
  }
}
