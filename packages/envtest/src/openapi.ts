/**
 * The OpenAPI v3 documents kubectl reads: `/openapi/v3` (the index) and the `api/v1` document.
 * kubectl 1.32 refuses `apply` when it can download neither v3 nor v2; with v3 it finds that PATCH
 * on Secrets accepts `fieldValidation` (so validation happens here, server-side) and builds its
 * strategic merge patches from these schemas. Only Secrets, Namespaces and their metadata are
 * described.
 */
import { createHash } from "node:crypto";

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
function ref(name: string) {
  return { $ref: `#/components/schemas/${name}` };
}
function str(description = "") {
  return { type: "string", description };
}
function strMap(description: string) {
  return {
    type: "object",
    additionalProperties: { type: "string", default: "" },
    description,
  };
}
function gvk(kind: string) {
  return { group: "", version: "v1", kind };
}

const schemas = {
  "io.k8s.api.core.v1.Secret": {
    type: "object",
    description:
      "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
    properties: {
      apiVersion: str(
        "APIVersion defines the versioned schema of this representation of an object.",
      ),
      kind: str("Kind is a string value representing the REST resource this object represents."),
      metadata: { ...ref(`${META}.ObjectMeta`), default: {} },
      data: {
        type: "object",
        additionalProperties: { type: "string", format: "byte" },
        description: "Data contains the secret data.",
      },
      immutable: {
        type: "boolean",
        description:
          "Immutable, if set to true, ensures that data stored in the Secret cannot be updated.",
      },
      stringData: strMap(
        "stringData allows specifying non-binary secret data in string form. It is never output when reading from the API.",
      ),
      type: str("Used to facilitate programmatic handling of secret data."),
    },
    "x-kubernetes-group-version-kind": [gvk("Secret")],
  },
  "io.k8s.api.core.v1.SecretList": {
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: str(),
      kind: str(),
      items: { type: "array", items: { ...ref("io.k8s.api.core.v1.Secret"), default: {} } },
      metadata: { ...ref(`${META}.ListMeta`), default: {} },
    },
    "x-kubernetes-group-version-kind": [gvk("SecretList")],
  },
  "io.k8s.api.core.v1.Namespace": {
    type: "object",
    properties: {
      apiVersion: str(),
      kind: str(),
      metadata: { ...ref(`${META}.ObjectMeta`), default: {} },
      spec: {
        type: "object",
        properties: { finalizers: { type: "array", items: { type: "string", default: "" } } },
      },
      status: { type: "object", properties: { phase: str() } },
    },
    "x-kubernetes-group-version-kind": [gvk("Namespace")],
  },
  [`${META}.ObjectMeta`]: {
    type: "object",
    properties: {
      annotations: strMap("Annotations is an unstructured key value map stored with a resource."),
      creationTimestamp: ref(`${META}.Time`),
      deletionGracePeriodSeconds: { type: "integer", format: "int64" },
      deletionTimestamp: ref(`${META}.Time`),
      finalizers: {
        type: "array",
        items: { type: "string", default: "" },
        "x-kubernetes-list-type": "set",
        "x-kubernetes-patch-strategy": "merge",
      },
      generateName: str(),
      generation: { type: "integer", format: "int64" },
      labels: strMap(
        "Map of string keys and values that can be used to organize and categorize objects.",
      ),
      managedFields: {
        type: "array",
        items: { ...ref(`${META}.ManagedFieldsEntry`), default: {} },
      },
      name: str("Name must be unique within a namespace."),
      namespace: str(),
      ownerReferences: {
        type: "array",
        items: { ...ref(`${META}.OwnerReference`), default: {} },
        "x-kubernetes-list-map-keys": ["uid"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "uid",
        "x-kubernetes-patch-strategy": "merge",
      },
      resourceVersion: str(),
      selfLink: str(),
      uid: str(),
    },
  },
  [`${META}.ListMeta`]: {
    type: "object",
    properties: {
      continue: str(),
      remainingItemCount: { type: "integer", format: "int64" },
      resourceVersion: str(),
      selfLink: str(),
    },
  },
  [`${META}.ManagedFieldsEntry`]: {
    type: "object",
    properties: {
      apiVersion: str(),
      fieldsType: str(),
      fieldsV1: ref(`${META}.FieldsV1`),
      manager: str(),
      operation: str(),
      subresource: str(),
      time: ref(`${META}.Time`),
    },
  },
  [`${META}.OwnerReference`]: {
    type: "object",
    required: ["apiVersion", "kind", "name", "uid"],
    properties: {
      apiVersion: str(),
      blockOwnerDeletion: { type: "boolean" },
      controller: { type: "boolean" },
      kind: str(),
      name: str(),
      uid: str(),
    },
    "x-kubernetes-map-type": "atomic",
  },
  [`${META}.FieldsV1`]: { type: "object" },
  [`${META}.Time`]: { type: "string", format: "date-time" },
  [`${META}.Status`]: {
    type: "object",
    properties: {
      apiVersion: str(),
      code: { type: "integer", format: "int32" },
      kind: str(),
      message: str(),
      reason: str(),
      status: str(),
    },
    "x-kubernetes-group-version-kind": [gvk("Status")],
  },
};

function query(name: string, type = "string") {
  return {
    name,
    in: "query",
    schema: { type, uniqueItems: true },
  };
}
function pathParam(name: string) {
  return {
    name,
    in: "path",
    required: true,
    schema: { type: "string", uniqueItems: true },
  };
}
const WRITE_PARAMS = [query("dryRun"), query("fieldManager"), query("fieldValidation")];
const LIST_PARAMS = [
  "allowWatchBookmarks",
  "continue",
  "fieldSelector",
  "labelSelector",
  "limit",
  "resourceVersion",
  "resourceVersionMatch",
  "sendInitialEvents",
  "timeoutSeconds",
  "watch",
].map((p) => query(p));

function json(schema: object) {
  return { "application/json": { schema } };
}
function ok(schema: object) {
  return { "200": { description: "OK", content: json(schema) } };
}

function op(action: string, kind: string, schema: object, extra: object = {}) {
  return {
    tags: ["core_v1"],
    operationId: `${action}CoreV1${kind}`,
    responses: ok(schema),
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk(kind),
    ...extra,
  };
}

const SECRET = ref("io.k8s.api.core.v1.Secret");
const PATCH_BODY = {
  required: true,
  content: Object.fromEntries(
    [
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
      "application/strategic-merge-patch+json",
    ].map((t) => [t, { schema: ref(`${META}.Patch`) }]),
  ),
};

const paths = {
  "/api/v1/namespaces/{namespace}/secrets": {
    get: op("list", "Secret", ref("io.k8s.api.core.v1.SecretList"), { parameters: LIST_PARAMS }),
    post: op("post", "Secret", SECRET, {
      parameters: WRITE_PARAMS,
      requestBody: { required: true, content: json(SECRET) },
    }),
    delete: op("deletecollection", "Secret", ref(`${META}.Status`), { parameters: LIST_PARAMS }),
    parameters: [pathParam("namespace")],
  },
  "/api/v1/namespaces/{namespace}/secrets/{name}": {
    get: op("get", "Secret", SECRET),
    put: op("put", "Secret", SECRET, {
      parameters: WRITE_PARAMS,
      requestBody: { required: true, content: json(SECRET) },
    }),
    patch: op("patch", "Secret", SECRET, {
      parameters: [...WRITE_PARAMS, query("force", "boolean")],
      requestBody: PATCH_BODY,
    }),
    delete: op("delete", "Secret", ref(`${META}.Status`), { parameters: [query("dryRun")] }),
    parameters: [pathParam("name"), pathParam("namespace")],
  },
  "/api/v1/secrets": {
    get: op("list", "Secret", ref("io.k8s.api.core.v1.SecretList"), { parameters: LIST_PARAMS }),
  },
  "/api/v1/namespaces": {
    get: op("list", "Namespace", ref("io.k8s.api.core.v1.Namespace"), { parameters: LIST_PARAMS }),
    post: op("post", "Namespace", ref("io.k8s.api.core.v1.Namespace"), {
      parameters: WRITE_PARAMS,
    }),
  },
  "/api/v1/namespaces/{name}": {
    get: op("get", "Namespace", ref("io.k8s.api.core.v1.Namespace")),
    put: op("put", "Namespace", ref("io.k8s.api.core.v1.Namespace"), { parameters: WRITE_PARAMS }),
    patch: op("patch", "Namespace", ref("io.k8s.api.core.v1.Namespace"), {
      parameters: [...WRITE_PARAMS, query("force", "boolean")],
      requestBody: PATCH_BODY,
    }),
    parameters: [pathParam("name")],
  },
};

/** The `api/v1` document, serialised once. */
export const coreV1Document = JSON.stringify({
  openapi: "3.0.0",
  info: { title: "Kubernetes", version: "v1.32.4" },
  paths,
  components: { schemas: { ...schemas, [`${META}.Patch`]: { type: "object" } } },
});

/** The hash the index advertises for the `api/v1` document (kubectl caches by it). */
export const coreV1Hash = createHash("sha512").update(coreV1Document).digest("hex").toUpperCase();

/** The `/openapi/v3` index, pointing at the one group-version served. */
export const openapiV3Index = JSON.stringify({
  paths: { "api/v1": { serverRelativeURL: `/openapi/v3/api/v1?hash=${coreV1Hash}` } },
});
