/**
 * Label and field selectors with the grammar of apimachinery's `labels.Parse` and
 * `fields.ParseSelector`, compiled once per request into predicates.
 */

import type { SecretJSON } from "./secret.ts";
import { badRequest, failWith, type OrStatus, ok } from "./status.ts";

/** Whether a Secret is in a request's selection. */
export type Predicate = (s: SecretJSON) => boolean;

const always: Predicate = () => true;

type Token =
  | { readonly t: "id"; readonly v: string }
  | { readonly t: "op"; readonly v: "!" | "=" | "==" | "!=" | ">" | "<" | "(" | ")" | "," }
  | { readonly t: "end" };

const OPS = ["!=", "==", "=", "!", ">", "<", "(", ")", ","] as const;

function lex(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i] ?? "";
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const op = OPS.find((o) => s.startsWith(o, i));
    if (op !== undefined) {
      out.push({ t: "op", v: op });
      i += op.length;
      continue;
    }
    let j = i;
    while (j < s.length && !/\s/.test(s[j] ?? "") && !OPS.some((o) => s.startsWith(o, j))) j++;
    out.push({ t: "id", v: s.slice(i, j) });
    i = j;
  }
  out.push({ t: "end" });
  return out;
}

function describe(t: Token): string {
  return t.t === "end" ? "EOS" : `'${t.v}'`;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `key` is a qualified name (`[prefix/]name`), as label keys must be. */
export function isQualifiedName(key: string): boolean {
  const parts = key.split("/");
  if (parts.length > 2) return false;
  const name = parts.at(-1) ?? "";
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix);
  }
  return true;
}

/** Whether `v` is a valid label value (empty allowed, ≤ 63 characters). */
export function isLabelValue(v: string): boolean {
  return v.length <= 63 && LABEL_VALUE.test(v);
}

/**
 * Parses a label selector (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`) into a
 * predicate on labels.
 */
export function parseLabelSelector(
  selector: string | undefined,
): OrStatus<(labels: Readonly<Record<string, string>> | undefined) => boolean> {
  if (selector === undefined || selector.trim() === "") return ok(() => true);
  const toks = lex(selector);
  let p = 0;
  const peek = (): Token => toks[p] ?? { t: "end" };
  const next = (): Token => toks[p++] ?? { t: "end" };
  const fail = (msg: string) => failWith(badRequest(`unable to parse requirement: ${msg}`));
  const reqs: ((l: Readonly<Record<string, string>>) => boolean)[] = [];
  for (;;) {
    let negate = false;
    let t = next();
    if (t.t === "op" && t.v === "!") {
      negate = true;
      t = next();
    }
    if (t.t !== "id") return fail(`found ${describe(t)}, expected: identifier`);
    const key = t.v;
    if (!isQualifiedName(key)) return fail(`invalid label key "${key}"`);
    const after = peek();
    if (negate || after.t === "end" || (after.t === "op" && after.v === ",")) {
      if (negate && !(after.t === "end" || (after.t === "op" && after.v === ","))) {
        return fail(`found ${describe(after)}, expected: ',' or 'end of string'`);
      }
      reqs.push(negate ? (l) => !(key in l) : (l) => key in l);
    } else {
      const op = next();
      const opName = op.t === "id" ? op.v : op.t === "op" ? op.v : "";
      if (opName === "in" || opName === "notin") {
        const open = next();
        if (!(open.t === "op" && open.v === "("))
          return fail(`found ${describe(open)}, expected: '('`);
        const values = new Set<string>();
        for (;;) {
          let v = next();
          if (v.t === "op" && v.v === ")" && values.size === 0)
            return fail("for 'in', 'notin' operators, values set can't be empty");
          let value = "";
          if (v.t === "id") {
            value = v.v;
            v = next();
          }
          if (!isLabelValue(value)) return fail(`invalid label value: "${value}"`);
          values.add(value);
          if (v.t === "op" && v.v === ")") break;
          if (!(v.t === "op" && v.v === ","))
            return fail(`found ${describe(v)}, expected: ',' or ')'`);
        }
        reqs.push(
          opName === "in"
            ? (l) => values.has(l[key] ?? "\0")
            : (l) => !(key in l) || !values.has(l[key] ?? ""),
        );
      } else if (opName === "=" || opName === "==" || opName === "!=") {
        let value = "";
        const v = peek();
        if (v.t === "id") {
          value = v.v;
          next();
        } else if (!(v.t === "end" || (v.t === "op" && v.v === ","))) {
          return fail(`found ${describe(v)}, expected: identifier`);
        }
        if (!isLabelValue(value)) return fail(`invalid label value: "${value}"`);
        reqs.push(opName === "!=" ? (l) => l[key] !== value : (l) => l[key] === value);
      } else if (opName === ">" || opName === "<") {
        const v = next();
        const n = v.t === "id" ? Number(v.v) : Number.NaN;
        if (v.t !== "id" || !/^-?\d+$/.test(v.v))
          return fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push((l) => {
          const have = l[key];
          if (have === undefined || !/^-?\d+$/.test(have)) return false;
          return opName === ">" ? Number(have) > n : Number(have) < n;
        });
      } else {
        return fail(`found ${describe(op)}, expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    const sep = next();
    if (sep.t === "end") break;
    if (!(sep.t === "op" && sep.v === ","))
      return fail(`found ${describe(sep)}, expected: ',' or 'end of string'`);
  }
  return ok((labels) => {
    const l = labels ?? {};
    return reqs.every((r) => r(l));
  });
}

/** The fields a Secret field selector may name, as the real conversion function allows. */
const SECRET_FIELDS: Readonly<Record<string, (s: SecretJSON) => string>> = {
  "metadata.name": (s) => s.metadata.name,
  "metadata.namespace": (s) => s.metadata.namespace,
  type: (s) => s.type,
};

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? "";
    if (c === "\\" && i + 1 < s.length) {
      cur += c + (s[i + 1] ?? "");
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = "";
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function unescapeValue(s: string): OrStatus<string> {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? "";
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = s[i + 1];
    if (n === "\\" || n === "," || n === "=") {
      out += n;
      i++;
    } else
      return failWith(badRequest(`invalid field selector: invalid escape sequence: \\${n ?? ""}`));
  }
  return ok(out);
}

/** Parses a Secret field selector; unknown fields are refused with the real server's message. */
export function parseFieldSelector(selector: string | undefined): OrStatus<Predicate> {
  if (selector === undefined || selector.trim() === "") return ok(always);
  const terms: Predicate[] = [];
  for (const term of splitUnescaped(selector, ",")) {
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (m === null)
      return failWith(badRequest(`invalid selector: '${selector}'; can't understand '${term}'`));
    const [, field = "", op, raw = ""] = m;
    const value = unescapeValue(raw);
    if (!value.ok) return value;
    const get = SECRET_FIELDS[field.trim()];
    if (get === undefined)
      return failWith(badRequest(`field label not supported: ${field.trim()}`));
    const v = value.value;
    terms.push(op === "!=" ? (s) => get(s) !== v : (s) => get(s) === v);
  }
  return ok((s) => terms.every((t) => t(s)));
}

/** One predicate for a request's namespace scope, label selector and field selector. */
export function compileSelection(
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): OrStatus<{ matches: Predicate; filtered: boolean }> {
  const labels = parseLabelSelector(labelSelector);
  if (!labels.ok) return labels;
  const fields = parseFieldSelector(fieldSelector);
  if (!fields.ok) return fields;
  const l = labels.value;
  const f = fields.value;
  const filtered = (labelSelector ?? "").trim() !== "" || (fieldSelector ?? "").trim() !== "";
  const matches: Predicate =
    namespace === undefined
      ? (s) => l(s.metadata.labels) && f(s)
      : (s) => s.metadata.namespace === namespace && l(s.metadata.labels) && f(s);
  return ok({ matches, filtered });
}
