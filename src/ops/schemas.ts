// Response schemas of the status API. Fastify serialises with fast-json-stringify, which writes
// only the properties listed here: no schema names a Secret field, so even a handler that passed
// an App through whole could not put its bytes on the wire.

const nullableString = { type: ["string", "null"] } as const;

/** `{error, ...}` with the details some errors carry. */
export const errorSchema = {
  type: "object",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: { type: "string" },
    host: { type: "string" },
    name: { type: "string" },
    reason: { type: "string" },
  },
} as const;

export const appRecordSchema = {
  type: "object",
  required: [
    "name",
    "hostnames",
    "secretRef",
    "upstream",
    "credential",
    "ready",
    "reason",
    "secretResourceVersion",
    "tls",
  ],
  additionalProperties: false,
  properties: {
    name: { type: "string" },
    hostnames: { type: "array", items: { type: "string" } },
    secretRef: {
      type: "object",
      required: ["namespace", "name", "key"],
      additionalProperties: false,
      properties: {
        namespace: { type: "string" },
        name: { type: "string" },
        key: { type: "string" },
      },
    },
    upstream: nullableString,
    // The App's prefix and state only: an App passed whole, whose `credential` is the value,
    // fails here (`prefix` is required) rather than writing it.
    credential: {
      type: ["object", "null"],
      required: ["prefix", "state", "rule"],
      additionalProperties: false,
      properties: {
        prefix: { type: "string" },
        state: {
          type: "string",
          enum: ["served", "credentials-off", "secret-unusable", "secret-unavailable"],
        },
        rule: nullableString,
      },
    },
    ready: { type: "boolean" },
    reason: nullableString,
    secretResourceVersion: nullableString,
    // Public facts of the certificate only: no property here can carry a key.
    tls: {
      type: ["object", "null"],
      required: ["secretRef", "state", "rule", "served", "secretResourceVersion"],
      additionalProperties: false,
      properties: {
        secretRef: {
          type: "object",
          required: ["namespace", "name"],
          additionalProperties: false,
          properties: { namespace: { type: "string" }, name: { type: "string" } },
        },
        state: { type: "string", enum: ["served", "refused", "certificates-off"] },
        rule: nullableString,
        served: {
          type: ["object", "null"],
          required: ["id", "serial", "notBefore", "notAfter"],
          additionalProperties: false,
          properties: {
            id: { type: "string" },
            serial: { type: "string" },
            notBefore: { type: "string" },
            notAfter: { type: "string" },
          },
        },
        secretResourceVersion: nullableString,
      },
    },
  },
} as const;

export const appListSchema = {
  type: "object",
  required: ["revision", "apps"],
  additionalProperties: false,
  properties: {
    revision: { type: "integer" },
    apps: { type: "array", items: appRecordSchema },
  },
} as const;

export const hostRecordSchema = {
  type: "object",
  required: ["host", "app", "upstream", "ready", "match", "pattern", "revision"],
  additionalProperties: false,
  properties: {
    host: { type: "string" },
    app: { type: "string" },
    upstream: nullableString,
    ready: { type: "boolean" },
    match: { type: "string", enum: ["exact", "wildcard"] },
    pattern: { type: "string" },
    revision: { type: "integer" },
  },
} as const;

export const snapshotRecordSchema = {
  type: "object",
  required: [
    "revision",
    "synced",
    "builtAt",
    "apps",
    "readyApps",
    "hostnames",
    "registry",
    "conflicts",
    "source",
    "stateSavedAt",
    "proxies",
  ],
  additionalProperties: false,
  properties: {
    revision: { type: "integer" },
    synced: { type: "boolean" },
    builtAt: nullableString,
    apps: { type: "integer" },
    readyApps: { type: "integer" },
    hostnames: { type: "integer" },
    registry: {
      type: ["object", "null"],
      required: [
        "present",
        "resourceVersion",
        "error",
        "refusedApps",
        "moreRefusedApps",
        "contentHash",
      ],
      additionalProperties: false,
      properties: {
        present: { type: "boolean" },
        resourceVersion: nullableString,
        error: nullableString,
        refusedApps: {
          type: "array",
          items: {
            type: "object",
            required: ["index", "name", "reason", "kept"],
            additionalProperties: false,
            properties: {
              index: { type: "integer" },
              name: nullableString,
              reason: { type: "string" },
              kept: { type: "boolean" },
            },
          },
        },
        moreRefusedApps: { type: "integer" },
        contentHash: nullableString,
      },
    },
    source: { type: ["string", "null"], enum: ["api-server", "state-file", null] },
    stateSavedAt: nullableString,
    proxies: {
      type: "array",
      items: {
        type: "object",
        required: ["target", "revision"],
        additionalProperties: false,
        properties: { target: { type: "string" }, revision: { type: ["integer", "null"] } },
      },
    },
    conflicts: {
      type: "array",
      items: {
        type: "object",
        required: ["hostname", "winner", "losers"],
        additionalProperties: false,
        properties: {
          hostname: { type: "string" },
          winner: { type: "string" },
          losers: { type: "array", items: { type: "string" } },
        },
      },
    },
  },
} as const;
