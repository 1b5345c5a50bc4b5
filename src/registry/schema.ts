import * as z from "zod";
import { normaliseHostname } from "./hostname.ts";

/** One Secret, by namespace and name: the one way the mirror and the builder name a Secret. */
export interface SecretRef {
  readonly namespace: string;
  readonly name: string;
}

/** Where an App's Secret bytes live: one key of one Secret (the document's `secretRef`). */
export interface SecretKeyRef extends SecretRef {
  readonly key: string;
}

/** One App as the Registry declares it, hostnames normalised. */
export interface AppSpec {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secretRef: SecretKeyRef;
  readonly upstream: string | null;
}

/** A valid Registry document, version 1. */
export interface Registry {
  readonly apps: readonly AppSpec[];
}

export const REGISTRY_API_VERSION = "replica-mirror/v1";

// Kubernetes rules: DNS-1123 label for App names and namespaces, DNS-1123 subdomain for
// Secret names, and the ConfigMap/Secret key rule.
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

const dnsLabel = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(DNS1123_LABEL, "must be a DNS-1123 label (lower-case letters, digits, '-')");

const dnsSubdomain = z
  .string()
  .max(253, "must be at most 253 characters")
  .regex(DNS1123_SUBDOMAIN, "must be a DNS-1123 subdomain");

const secretKey = z
  .string()
  .max(253, "must be at most 253 characters")
  .regex(SECRET_KEY, "must consist of alphanumerics, '-', '_' or '.'")
  .refine((k) => k !== "." && k !== "..", "must not be '.' or '..'");

const hostname = z.string().transform((raw, ctx) => {
  const normalised = normaliseHostname(raw);
  if (normalised.ok) return normalised.value.pattern;
  ctx.issues.push({ code: "custom", message: normalised.error, input: raw });
  return z.NEVER;
});

const secretRef = z.object({
  namespace: dnsLabel.optional(),
  name: dnsSubdomain,
  key: secretKey,
});

const app = z.object({
  name: dnsLabel,
  hostnames: z.array(hostname).min(1, "at least one hostname is required"),
  secretRef,
  upstream: z.string().optional(),
  // The leader's view of readiness: accepted and ignored (docs/serving.md, "Readiness is this
  // replica's own").
  secretReady: z.boolean().optional(),
});

/** The document as written (unknown fields are dropped: forward compatibility). */
export const registryDocument = z
  .object({
    apiVersion: z.literal(REGISTRY_API_VERSION, { error: `must be "${REGISTRY_API_VERSION}"` }),
    apps: z.array(app),
  })
  .superRefine((doc, ctx) => {
    const seen = new Map<string, number>();
    doc.apps.forEach((a, i) => {
      const first = seen.get(a.name);
      if (first === undefined) seen.set(a.name, i);
      else {
        ctx.addIssue({
          code: "custom",
          path: ["apps", i, "name"],
          message: `duplicate App name '${a.name}' (first at apps[${first}])`,
        });
      }
    });
  });
