import { gunzipSync } from "node:zlib";
import { parseJson } from "../json.ts";
import { err, ok, type Result } from "../result.ts";
import { echoName } from "./echo.ts";
import {
  type AppDocument,
  type AppRules,
  type AppSpec,
  appShape,
  checkNames,
  type Issues,
  type Registry,
  registryEnvelope,
  registryShape,
} from "./schema.ts";

/** Why a Registry value was refused whole; `issues` name the offending path, as `apps: expected array`. */
interface RegistryError {
  readonly message: string;
  readonly issues: readonly string[];
}

/** An App entry of the document that was refused, and why; the other Apps still apply. */
export interface RefusedApp {
  /** Its place in the document's `apps`. */
  readonly index: number;
  /** Its `name` as `echoName` repeats it, when the entry has a string there (maybe the bad one). */
  readonly name: string | null;
  /** What is wrong, as paths inside the entry: `hostnames[0]: port not allowed`. */
  readonly reason: string;
}

/** A document read: the Registry of its valid Apps, and the entries refused. */
export interface ParsedRegistry {
  readonly registry: Registry;
  readonly refused: readonly RefusedApp[];
}

/** How to read a decoded document. */
interface DocumentOptions {
  /** The Registry Secret's namespace: the default for `secretRef.namespace`. */
  readonly defaultNamespace: string;
  /** Default false: an App whose upstream is a local address is refused (ADR 48). */
  readonly allowLocalUpstreams?: boolean;
}

interface ParseOptions extends DocumentOptions {
  /** Cap on the decompressed size of a gzip value; a bigger one is malformed, not an outage. */
  readonly maxDecompressedBytes?: number;
}

/** The cap on a gzip value's decompressed size unless told another. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 32 * 1024 * 1024;
const MAX_ISSUES = 20;
/** Characters of one issue's message: messages never quote the document, and this keeps it so. */
const MAX_MESSAGE = 200;

/** Parses a Registry value (JSON, or gzip-compressed JSON): never throws. */
export function parseRegistry(
  value: Uint8Array,
  options: ParseOptions,
): Result<ParsedRegistry, RegistryError> {
  const text = decode(value, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  if (!text.ok) return text;
  const json = parseJson("the value", text.value);
  if (!json.ok) return failure(json.error.message);
  return parseRegistryDocument(json.value, options);
}

/**
 * Validates an already-decoded document: the same rules and messages as `parseRegistry`. A
 * document whose envelope is wrong is refused whole; an App entry that breaks a rule (its
 * shape, a name, a hostname, a cap, a name an earlier entry took) is refused alone.
 */
export function parseRegistryDocument(
  json: unknown,
  options: DocumentOptions,
): Result<ParsedRegistry, RegistryError> {
  const whole = registryShape.safeParse(json);
  if (whole.success) return ok(checkedApps(whole.data.apps, options));
  return parseEntryByEntry(json, options);
}

/** Every App entry has its shape: each is held to the naming rules and to unique names. */
function checkedApps(entries: readonly AppDocument[], options: DocumentOptions): ParsedRegistry {
  return admitted(entries, (app) => ok(app), options);
}

/**
 * Each entry that `shape` accepts is held to the naming rules once (`checkNames`, which also
 * hands on its hostnames in normal form), then to unique names; refusals come in entry order.
 */
function admitted<E>(
  entries: readonly E[],
  shape: (entry: E) => Result<AppDocument, string>,
  options: DocumentOptions,
): ParsedRegistry {
  const rules: AppRules = { allowLocalUpstreams: options.allowLocalUpstreams ?? false };
  const valid: ValidApp[] = [];
  const refused: RefusedApp[] = [];
  const first = new Map<string, number>();
  const issues: Issues = [];
  entries.forEach((entry, index) => {
    const shaped = shape(entry);
    if (!shaped.ok) {
      refused.push({ index, name: nameOf(entry), reason: shaped.error });
      return;
    }
    const app = shaped.value;
    const hostnames: string[] = [];
    checkNames(app, rules, issues, hostnames);
    if (issues.length > 0) {
      refused.push({ index, name: echoName(app.name), reason: reasonOf(issues) });
      issues.length = 0;
      return;
    }
    if (taken(first, app.name, index, refused)) return;
    valid.push({ app, hostnames });
  });
  return {
    registry: registryOf(valid, options.defaultNamespace),
    refused: Object.freeze(refused),
  };
}

function reasonOf(issues: readonly Parameters<typeof formatIssue>[0][]): string {
  return issues
    .slice(0, MAX_ISSUES)
    .map((i) => formatIssue(i))
    .join("; ");
}

/** Whether an earlier entry took `name` (then this one is refused); else it is taken now. */
function taken(
  first: Map<string, number>,
  name: string,
  index: number,
  refused: RefusedApp[],
): boolean {
  const before = first.get(name);
  if (before !== undefined) {
    refused.push({ index, name, reason: `name: taken by apps[${before}]` });
    return true;
  }
  first.set(name, index);
  return false;
}

/** Some entry lacks its shape, or the envelope is wrong: each entry is parsed on its own. */
function parseEntryByEntry(
  json: unknown,
  options: DocumentOptions,
): Result<ParsedRegistry, RegistryError> {
  const envelope = registryEnvelope.safeParse(json);
  if (!envelope.success) {
    const issues = envelope.error.issues.slice(0, MAX_ISSUES).map((i) => formatIssue(i));
    const more = envelope.error.issues.length - issues.length;
    const message = `invalid registry: ${issues.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
    return err({ message, issues });
  }
  const shape = (entry: unknown): Result<AppDocument, string> => {
    const app = appShape.safeParse(entry);
    return app.success ? ok(app.data) : err(reasonOf(app.error.issues));
  };
  return ok(admitted(envelope.data.apps, shape, options));
}

/** An entry's `name`, when it is a string, as a refusal repeats it. */
function nameOf(entry: unknown): string | null {
  if (typeof entry !== "object" || entry === null || !Object.hasOwn(entry, "name")) return null;
  const { name } = entry as { readonly name: unknown };
  return typeof name === "string" ? echoName(name) : null;
}

/** An App entry that follows every rule, and its hostnames in normal form. */
interface ValidApp {
  readonly app: AppDocument;
  readonly hostnames: string[];
}

/**
 * The Registry of valid App entries: the default namespaces, a null upstream, credential and tls, and
 * an empty prefix filled in, hostnames normalised and deduplicated, frozen, because Snapshots
 * share these objects with every later Snapshot.
 */
function registryOf(valid: readonly ValidApp[], defaultNamespace: string): Registry {
  const apps: AppSpec[] = valid.map(({ app: a, hostnames }) =>
    Object.freeze({
      name: a.name,
      hostnames: Object.freeze(distinct(hostnames)),
      secretRef: Object.freeze({
        namespace: a.secretRef.namespace ?? defaultNamespace,
        name: a.secretRef.name,
        key: a.secretRef.key,
      }),
      upstream: a.upstream ?? null,
      credential:
        a.credential === undefined ? null : Object.freeze({ prefix: a.credential.prefix ?? "" }),
      tls:
        a.tls === undefined
          ? null
          : Object.freeze({
              secretRef: Object.freeze({
                namespace: a.tls.secretRef.namespace ?? defaultNamespace,
                name: a.tls.secretRef.name,
              }),
            }),
    }),
  );
  return Object.freeze({ apps: Object.freeze(apps) });
}

/**
 * Each name once, in order, in an array of its own length: one grown by `push` keeps room for 17
 * names, 184 bytes for the one name of almost every App where its copy takes 56, for as long as
 * the Registry is served.
 */
function distinct(names: string[]): string[] {
  if (names.length === 1 || (names.length === 2 && names[0] !== names[1])) return names.slice();
  return [...new Set(names)];
}

function decode(value: Uint8Array, cap: number): Result<string, RegistryError> {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      return ok(gunzipSync(bytes, { maxOutputLength: cap }).toString("utf8"));
    } catch (e) {
      if (e instanceof RangeError)
        return failure(`gzip value decompresses to more than ${cap} bytes`);
      return failure(`gzip value is corrupt: ${(e as Error).message}`);
    }
  }
  if (bytes.length > cap) return failure(`value is larger than ${cap} bytes`);
  return ok(bytes.toString("utf8"));
}

function failure(message: string): Result<never, RegistryError> {
  return err({ message: `invalid registry: ${message}`, issues: [message] });
}

/** `apps[3].hostnames[0]: port not allowed`. */
function formatIssue(issue: {
  readonly path?: readonly PropertyKey[] | undefined;
  readonly message?: string | undefined;
}): string {
  let message = issue.message ?? "";
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE)}…`;
  let path = "";
  for (const p of issue.path ?? []) {
    if (typeof p === "number") path += `[${p}]`;
    else path += path === "" ? String(p) : `.${String(p)}`;
  }
  return path === "" ? message : `${path}: ${message}`;
}
