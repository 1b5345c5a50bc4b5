// The common case read without zod (ADR 24): a document that is valid as it stands. The zod schema
// (schema.ts) stays the definition and the only source of error messages; this reader gives up
// (null) on anything it is not sure of, and then the schema decides. A property test holds the
// two to the same answer. At 10k Apps the schema costs 70–140 ms of a cold start; this, a fraction.

import { normaliseHostname } from "./hostname.ts";
import {
  type AppSpec,
  DNS1123_LABEL,
  DNS1123_SUBDOMAIN,
  REGISTRY_API_VERSION,
  type Registry,
  SECRET_KEY,
} from "./schema.ts";

type Json = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const label = (v: unknown): v is string =>
  typeof v === "string" && v.length <= 63 && DNS1123_LABEL.test(v);

const subdomain = (v: unknown): v is string =>
  typeof v === "string" && v.length <= 253 && DNS1123_SUBDOMAIN.test(v);

const key = (v: unknown): v is string =>
  typeof v === "string" && v.length <= 253 && SECRET_KEY.test(v) && v !== "." && v !== "..";

/** The Registry zod would give for `json`, or null when this reader cannot vouch for it. */
export function readPlainRegistry(json: unknown, defaultNamespace: string): Registry | null {
  if (!isObject(json) || json.apiVersion !== REGISTRY_API_VERSION || !Array.isArray(json.apps))
    return null;
  const names = new Set<string>();
  const apps: AppSpec[] = [];
  for (const a of json.apps as readonly unknown[]) {
    const app = isObject(a) ? readApp(a, defaultNamespace) : null;
    if (app === null || names.has(app.name)) return null;
    names.add(app.name);
    apps.push(app);
  }
  return Object.freeze({ apps: Object.freeze(apps) });
}

function readApp(a: Json, defaultNamespace: string): AppSpec | null {
  const { name, hostnames, secretRef: ref, upstream, secretReady } = a;
  if (!label(name) || !Array.isArray(hostnames) || hostnames.length === 0) return null;
  if (upstream !== undefined && typeof upstream !== "string") return null;
  if (secretReady !== undefined && typeof secretReady !== "boolean") return null;
  if (!isObject(ref) || !subdomain(ref.name) || !key(ref.key)) return null;
  if (ref.namespace !== undefined && !label(ref.namespace)) return null;
  const patterns = new Set<string>();
  for (const h of hostnames as readonly unknown[]) {
    if (typeof h !== "string") return null;
    const normalised = normaliseHostname(h);
    if (!normalised.ok) return null;
    patterns.add(normalised.value.pattern);
  }
  return Object.freeze({
    name,
    hostnames: Object.freeze([...patterns]),
    secretRef: Object.freeze({
      namespace: (ref.namespace as string | undefined) ?? defaultNamespace,
      name: ref.name,
      key: ref.key,
    }),
    upstream: upstream ?? null,
  });
}
