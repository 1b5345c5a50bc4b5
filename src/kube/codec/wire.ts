// The API's JSON, parsed with zod. Unknown fields are stripped on purpose: managedFields and
// annotations (kubectl's last-applied-configuration holds a copy of the data) are not kept.
// Error messages name a path and a size, never a value, so Secret data cannot leak into logs.

import * as z from "zod";
import { parseJson } from "../../json.ts";
import { err, ok, type Result } from "../../result.ts";
import type { ApiStatus, ListPage, SecretObject, WatchEvent } from "../cache/list-watch.ts";
import { secretData } from "./secret-data.ts";

// No transforms: a schema without them is compiled by zod into one fast function, three to four
// times faster per Secret in the diagnostic run that chose it; nulls are dropped after parsing.
const secretSchema = z.object({
  metadata: z.object({
    namespace: z.string(),
    name: z.string(),
    resourceVersion: z.string(),
    uid: z.string().optional(),
    labels: z.record(z.string(), z.string()).nullish(),
  }),
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).nullish(),
});

const listMetadataSchema = z.object({
  resourceVersion: z.string(),
  continue: z.string().optional(),
});

const statusSchema = z.object({
  code: z.number().int(),
  reason: z.string().optional(),
  message: z.string().optional(),
  details: z.object({ retryAfterSeconds: z.number().int().nonnegative().optional() }).nullish(),
});

const eventSchema = z.object({
  type: z.enum(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]),
  object: z.unknown(),
});

const bookmarkSchema = z.object({
  metadata: z.object({
    resourceVersion: z.string(),
    annotations: z.record(z.string(), z.string()).nullish(),
  }),
});

/** The annotation that ends a streaming list's initial events. */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** A decode failure: where it failed, never the offending value. */
interface DecodeFailure {
  readonly message: string;
}

function describeIssues(what: string, error: z.ZodError): DecodeFailure {
  const [first] = error.issues;
  if (first === undefined) return { message: `${what}: invalid` };
  const path = first.path.map(String).join(".") || "(root)";
  const expected =
    "expected" in first && typeof first.expected === "string"
      ? ` (expected ${first.expected})`
      : "";
  const more = error.issues.length > 1 ? ` and ${error.issues.length - 1} more issue(s)` : "";
  return { message: `${what}: ${first.code} at ${path}${expected}${more}` };
}

/** Decodes one Secret object, its base64 values into byte strings. */
export function decodeSecret(value: unknown, what = "Secret"): Result<SecretObject, DecodeFailure> {
  const parsed = secretSchema.safeParse(value);
  if (!parsed.success) return err(describeIssues(what, parsed.error));
  const { metadata, type, data } = parsed.data;
  const { labels, ...rest } = metadata;
  return ok({
    metadata: labels === null ? rest : metadata,
    ...(type === undefined ? {} : { type }),
    // The values as the document holds them: zod's copy assigns each key, and assigning
    // `__proto__` sets a prototype instead of a key.
    ...(data === null || data === undefined
      ? {}
      : { data: byteStrings((value as { readonly data: Readonly<Record<string, string>> }).data) }),
  } as SecretObject);
}

/** Base64 values as byte strings. */
function byteStrings(data: Readonly<Record<string, string>>): Record<string, string> {
  return secretData(Object.entries(data).map(([k, v]) => [k, byteString(v)]));
}

/**
 * One base64 value's bytes, one character per byte. `atob` makes that string at once, twice as
 * fast as a Buffer in between, which was one allocation outside the V8 heap per Secret decoded
 * (ADR 62); a value `atob` refuses (bad padding, say) decodes as a Buffer decodes it, as before.
 */
function byteString(base64: string): string {
  try {
    return atob(base64);
  } catch {
    return Buffer.from(base64, "base64").toString("latin1");
  }
}

/** Decodes a SecretList's metadata; an empty `continue` means the last page. */
export function decodeListMetadata(value: unknown): Result<ListPage, DecodeFailure> {
  const parsed = listMetadataSchema.safeParse(value);
  if (!parsed.success) return err(describeIssues("SecretList metadata", parsed.error));
  const { resourceVersion, continue: token } = parsed.data;
  return ok(token ? { resourceVersion, continue: token } : { resourceVersion });
}

/** Decodes a metav1.Status (an error body or an ERROR event's object). */
export function decodeStatus(value: unknown): Result<ApiStatus, DecodeFailure> {
  const parsed = statusSchema.safeParse(value);
  if (!parsed.success) return err(describeIssues("Status", parsed.error));
  const { code, reason, message, details } = parsed.data;
  const retryAfterSeconds = details?.retryAfterSeconds;
  return ok({
    code,
    ...(reason === undefined ? {} : { reason }),
    ...(message === undefined ? {} : { message }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

/** Decodes one line of a watch response. */
export function decodeWatchLine(text: string): Result<WatchEvent, DecodeFailure> {
  const json = parseJson("watch event", text);
  if (!json.ok) return json;
  const event = eventSchema.safeParse(json.value);
  if (!event.success) return err(describeIssues("watch event", event.error));
  const { type, object } = event.data;
  switch (type) {
    case "BOOKMARK": {
      const bookmark = bookmarkSchema.safeParse(object);
      if (!bookmark.success) return err(describeIssues("BOOKMARK object", bookmark.error));
      const { resourceVersion, annotations } = bookmark.data.metadata;
      return ok(
        annotations?.[INITIAL_EVENTS_END] === "true"
          ? { type, resourceVersion, initialEventsEnd: true }
          : { type, resourceVersion },
      );
    }
    case "ERROR": {
      const status = decodeStatus(object);
      return status.ok ? ok({ type, status: status.value }) : status;
    }
    default: {
      const secret = decodeSecret(object, `${type} object`);
      return secret.ok ? ok({ type, object: secret.value }) : secret;
    }
  }
}
