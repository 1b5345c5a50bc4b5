/**
 * Secret validation as kube-apiserver's `ValidateSecret` and `ValidateObjectMeta` perform it, with
 * their exact field paths and wording, because tests and humans compare the 422 messages with real
 * clusters'.
 */

import { dataByteSize, type SecretJSON } from "./secret.ts";
import { isLabelValue, isQualifiedName } from "./selectors.ts";
import { invalid, type StatusFailure } from "./status.ts";

/** One field's validation error, as apimachinery's field.Error renders it. */
export interface FieldError {
  readonly field: string;
  /**
   * The cause reason: FieldValueInvalid, FieldValueRequired, FieldValueTooLong,
   * FieldValueForbidden.
   */
  readonly reason: string;
  /** The body after the field path, e.g. `Invalid value: "Foo": a lowercase RFC 1123 ...`. */
  readonly message: string;
}

/** The 1 MiB limit on the decoded bytes of a Secret's data. */
const MAX_SECRET_BYTES = 1024 * 1024;
const MAX_ANNOTATION_BYTES = 256 * 1024;

function quote(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** `field: Invalid value: "v": detail`. */
export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return {
    field,
    reason: "FieldValueInvalid",
    message: `Invalid value: ${quote(value)}: ${detail}`,
  };
}
/** `field: Required value[: detail]`. */
function required(field: string, detail = ""): FieldError {
  return {
    field,
    reason: "FieldValueRequired",
    message: detail === "" ? "Required value" : `Required value: ${detail}`,
  };
}
/** `field: Too long: must have at most N bytes`. */
function tooLong(field: string, max: number): FieldError {
  return {
    field,
    reason: "FieldValueTooLong",
    message: `Too long: must have at most ${max} bytes`,
  };
}
/** `field: Forbidden: detail`. */
function forbidden(field: string, detail: string): FieldError {
  return {
    field,
    reason: "FieldValueForbidden",
    message: `Forbidden: ${detail}`,
  };
}

function regexDetail(msg: string, regex: string, examples: readonly string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(",  or ")}, regex used for validation is '${regex}')`;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** IsDNS1123Subdomain's messages for a value (empty when valid). */
function dns1123SubdomainErrors(v: string): string[] {
  const out: string[] = [];
  if (v.length > 253) out.push("must be no more than 253 characters");
  if (!DNS1123_SUBDOMAIN.test(v)) {
    out.push(
      regexDetail(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
        ["example.com"],
      ),
    );
  }
  return out;
}

/** IsDNS1123Label's messages for a value (empty when valid). */
export function dns1123LabelErrors(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push("must be no more than 63 characters");
  if (!DNS1123_LABEL.test(v)) {
    out.push(
      regexDetail(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
        ["my-name", "123-abc"],
      ),
    );
  }
  return out;
}

/** IsConfigMapKey's messages for a data key (empty when valid). */
function configKeyErrors(k: string): string[] {
  const out: string[] = [];
  if (k.length > 253) out.push("must be no more than 253 characters");
  if (!CONFIG_KEY.test(k)) {
    out.push(
      regexDetail(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        "[-._a-zA-Z0-9]+",
        ["key.name", "KEY_NAME", "key-name"],
      ),
    );
  }
  if (k === ".") out.push("must not be '.'");
  else if (k === "..") out.push("must not be '..'");
  else if (k.startsWith("..")) out.push("must not start with '..'");
  return out;
}

function validateMeta(s: SecretJSON, nameRequired: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const { name, namespace, labels, annotations } = s.metadata;
  if (name === "") {
    if (nameRequired) errs.push(required("metadata.name", "name or generateName is required"));
  } else {
    for (const m of dns1123SubdomainErrors(name)) errs.push(invalidValue("metadata.name", name, m));
  }
  if (namespace === "") errs.push(required("metadata.namespace"));
  else
    for (const m of dns1123LabelErrors(namespace))
      errs.push(invalidValue("metadata.namespace", namespace, m));
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (!isQualifiedName(k)) {
      errs.push(
        invalidValue(
          "metadata.labels",
          k,
          regexDetail(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
            ["MyName", "my.name", "123-abc"],
          ),
        ),
      );
    }
    if (!isLabelValue(v)) {
      errs.push(
        invalidValue(
          "metadata.labels",
          v,
          v.length > 63
            ? "must be no more than 63 characters"
            : regexDetail(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
                ["MyValue", "my_value", "12345"],
              ),
        ),
      );
    }
  }
  let annotationBytes = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    annotationBytes += Buffer.byteLength(k) + Buffer.byteLength(v);
    if (!isQualifiedName(k.toLowerCase())) {
      errs.push(
        invalidValue(
          "metadata.annotations",
          k,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    }
  }
  if (annotationBytes > MAX_ANNOTATION_BYTES)
    errs.push(tooLong("metadata.annotations", MAX_ANNOTATION_BYTES));
  return errs;
}

function validateTypeRules(s: SecretJSON): FieldError[] {
  const data = s.data ?? {};
  const need = (key: string): FieldError[] => (key in data ? [] : [required(`data[${key}]`)]);
  switch (s.type) {
    case "kubernetes.io/tls":
      return [...need("tls.crt"), ...need("tls.key")];
    case "kubernetes.io/dockerconfigjson": {
      const missing = need(".dockerconfigjson");
      if (missing.length > 0) return missing;
      try {
        JSON.parse(Buffer.from(data[".dockerconfigjson"] ?? "", "base64").toString("utf8"));
        return [];
      } catch (e) {
        return [invalidValue("data[.dockerconfigjson]", "<secret contents redacted>", String(e))];
      }
    }
    case "kubernetes.io/dockercfg":
      return need(".dockercfg");
    case "kubernetes.io/ssh-auth":
      return need("ssh-privatekey");
    default:
      return [];
  }
}

/** Every error a create of `s` would get (empty when valid). */
export function validateSecret(s: SecretJSON): FieldError[] {
  const errs = validateMeta(s, true);
  for (const k of Object.keys(s.data ?? {})) {
    for (const m of configKeyErrors(k)) errs.push(invalidValue(`data[${k}]`, k, m));
  }
  if (dataByteSize(s.data) > MAX_SECRET_BYTES) errs.push(tooLong("data", MAX_SECRET_BYTES));
  errs.push(...validateTypeRules(s));
  return errs;
}

function sameData(a: SecretJSON, b: SecretJSON): boolean {
  const ak = Object.keys(a.data ?? {});
  const bk = Object.keys(b.data ?? {});
  return ak.length === bk.length && ak.every((k) => a.data?.[k] === b.data?.[k]);
}

/** Every error an update from `old` to `next` would get: the create rules plus immutability. */
export function validateSecretUpdate(next: SecretJSON, old: SecretJSON): FieldError[] {
  const errs = validateSecret(next);
  if (next.type !== old.type) errs.push(invalidValue("type", next.type, "field is immutable"));
  if (old.immutable === true) {
    if (next.immutable !== true)
      errs.push(forbidden("immutable", "field is immutable when `immutable` is set"));
    if (!sameData(next, old))
      errs.push(forbidden("data", "field is immutable when `immutable` is set"));
  }
  return errs;
}

/** The 422 Status for a Secret's field errors. */
export function invalidSecret(name: string, errors: readonly FieldError[]): StatusFailure {
  return invalid("Secret", name, errors);
}
