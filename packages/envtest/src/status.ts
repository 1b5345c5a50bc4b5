/**
 * The apimachinery `Status` error catalogue: every failure the fake API server returns is built
 * here, shaped and worded as kube-apiserver 1.32 shapes it, because clients branch on `reason` and
 * `code` and humans read `message`. An expected failure is a value (`OrStatus`), never an
 * exception: whatever step refuses a request already holds the Status the server answers with.
 */

export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** Status.details: which object failed and why, field by field. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** A `kind: Status` object, keys in the order the real server writes them. */
export interface Status {
  readonly kind: "Status";
  readonly apiVersion: "v1";
  readonly metadata: Record<string, never>;
  readonly status: "Failure" | "Success";
  readonly message?: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A failed request: the Status body plus any extra response headers (Retry-After). */
export interface StatusFailure {
  readonly status: Status;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a step of serving a request yields: its value, or the Status failure to answer instead. */
export type OrStatus<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: StatusFailure };

/** A step that succeeded with `value`. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** A step that refuses the request with `failure`. */
export function failWith(failure: StatusFailure): {
  readonly ok: false;
  readonly failure: StatusFailure;
} {
  return { ok: false, failure };
}

function failure(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): StatusFailure {
  return {
    status: {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason,
      ...(details === undefined ? {} : { details }),
      code,
    },
  };
}

/** 404 for a named object: `secrets "x" not found`. */
export function notFound(resource: string, name: string): StatusFailure {
  return failure(404, "NotFound", `${resource} "${name}" not found`, { name, kind: resource });
}

/** 404 for a URL the server does not serve. */
export function pathNotFound(): StatusFailure {
  return failure(404, "NotFound", "the server could not find the requested resource", {});
}

/** 409 on create when the name is taken. */
export function alreadyExists(resource: string, name: string): StatusFailure {
  return failure(409, "AlreadyExists", `${resource} "${name}" already exists`, {
    name,
    kind: resource,
  });
}

/** 409 on a stale resourceVersion or a failed precondition. */
export function conflict(
  resource: string,
  name: string,
  why = "the object has been modified; please apply your changes to the latest version and try again",
): StatusFailure {
  return failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${resource} "${name}": ${why}`,
    {
      name,
      kind: resource,
    },
  );
}

/** 409 from server-side apply when fields owned by other managers would change. */
export function applyConflict(
  conflicts: readonly { manager: string; field: string }[],
): StatusFailure {
  const n = conflicts.length;
  const head = `Apply failed with ${n} conflict${n === 1 ? "" : "s"}`;
  const message =
    n === 1
      ? `${head}: conflict with "${conflicts[0]?.manager}" using v1: ${conflicts[0]?.field}`
      : `${head}: ${conflicts.map((c) => `conflict with "${c.manager}" using v1: ${c.field}`).join("\n")}`;
  return failure(409, "Conflict", message, {
    causes: conflicts.map((c) => ({
      reason: "FieldManagerConflict",
      message: `conflict with "${c.manager}" using v1`,
      field: c.field,
    })),
  });
}

/** One field's error, as `field.Error` renders it (`message` starts with its type). */
export interface FieldError {
  readonly field: string;
  readonly message: string;
  readonly reason: string;
}

/** The field errors as an aggregate's message, and as the Status causes. */
function rendered(errors: readonly FieldError[]): { list: string; causes: StatusCause[] } {
  const lines = errors.map((e) => `${e.field}: ${e.message}`);
  return {
    list: lines.length === 1 ? (lines[0] ?? "") : `[${lines.join(", ")}]`,
    causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
  };
}

/** 422 with one cause per field error; `kind` is the object kind (`Secret`), not the resource. */
export function invalid(kind: string, name: string, errors: readonly FieldError[]): StatusFailure {
  const { list, causes } = rendered(errors);
  return failure(422, "Invalid", `${kind} "${name}" is invalid: ${list}`, { name, kind, causes });
}

/**
 * 422 for list or watch options the server refuses: the handler reports them as an invalid
 * `ListOptions` of group `meta.k8s.io` with an empty name, which the details leave out.
 */
export function invalidListOptions(errors: readonly FieldError[]): StatusFailure {
  const { list, causes } = rendered(errors);
  return failure(422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${list}`, {
    group: "meta.k8s.io",
    kind: "ListOptions",
    causes,
  });
}

/** 422 without field causes, as a failed JSON patch operation gets. */
export function unprocessable(message: string): StatusFailure {
  return failure(422, "Invalid", message);
}

/** 400 for a body that does not decode as the `kind` the URL names. */
export function cannotHandle(kind: string, why: string): StatusFailure {
  return badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${why}`);
}

/** 400 for malformed requests: bad selectors, undecodable bodies, mismatched names. */
export function badRequest(message: string): StatusFailure {
  return failure(400, "BadRequest", message);
}

/** 405 for a verb the resource does not support. */
export function methodNotAllowed(): StatusFailure {
  return failure(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
    {},
  );
}

/** 406 when the Accept header admits no JSON. */
export function notAcceptable(): StatusFailure {
  return failure(
    406,
    "NotAcceptable",
    "the server was unable to respond with a content type that the client supports",
  );
}

/** 413 for a request body over the server's 3 MiB limit. */
export function entityTooLarge(limit: number): StatusFailure {
  return failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${limit}`);
}

/** 415 for a PATCH or write body in a format the server does not decode. */
export function unsupportedMediaType(
  contentType: string,
  accepted: readonly string[],
): StatusFailure {
  return failure(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    { kind: contentType },
  );
}

/** 410 for a resourceVersion older than the retained history. */
export function expired(message: string): StatusFailure {
  return failure(410, "Expired", message);
}

/** 504 for a resourceVersion newer than any the server has produced. */
export function tooLargeResourceVersion(requested: number, current: number): StatusFailure {
  return failure(504, "Timeout", `Too large resource version: ${requested}, current: ${current}`, {
    causes: [
      {
        reason: "ResourceVersionTooLarge",
        message: `Too large resource version`,
      },
    ],
    retryAfterSeconds: 1,
  });
}

/** An injected failure with the given HTTP code, worded as the real server words that code. */
export function injected(code: number, retryAfterSeconds?: number): StatusFailure {
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  const headers =
    retryAfterSeconds === undefined ? undefined : { "Retry-After": String(retryAfterSeconds) };
  const base = ((): StatusFailure => {
    switch (code) {
      case 401:
        return failure(401, "Unauthorized", "Unauthorized");
      case 403:
        return failure(403, "Forbidden", "forbidden: injected fault");
      case 404:
        return failure(404, "NotFound", "the server could not find the requested resource", {});
      case 409:
        return failure(409, "Conflict", "Operation cannot be fulfilled: injected fault");
      case 410:
        return expired("too old resource version: injected fault");
      case 429:
        return failure(429, "TooManyRequests", "Too many requests, please try again later.", retry);
      case 503:
        return failure(
          503,
          "ServiceUnavailable",
          "the server is currently unable to handle the request",
          retry,
        );
      case 504:
        return failure(
          504,
          "Timeout",
          "the server was unable to return a response in the time allotted, but may still be processing the request",
          retry,
        );
      default:
        return failure(
          code,
          code >= 500 ? "InternalError" : "BadRequest",
          "Internal error occurred: injected fault",
          {
            causes: [{ message: "injected fault" }],
            ...retry,
          },
        );
    }
  })();
  return headers === undefined ? base : { status: base.status, headers };
}

/** The Success Status a DELETE of a Secret returns (the real store sets no `code` on it). */
export function deleted(resource: string, name: string, uid: string): Omit<Status, "code"> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: { name, kind: resource, uid },
  };
}
