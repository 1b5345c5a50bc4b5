// The canonical forms the pusher's verification compares (ADR 51): what a proxy reports of the
// table it holds and what was pushed to it, each reduced to a digest that does not depend on the
// order the proxy keeps or lists its entries in (HAProxy's maps: line-sum.ts).

import { createHash } from "node:crypto";

/** SHA-256 of `text`, hex. */
export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * `value` (a JSON value) as JSON text with every object's keys in code-unit order and no space:
 * two values equal but for their objects' key order give the same text. Members whose value is
 * undefined are left out, and array elements undefined written null, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  }
  if (typeof value === "object" && value !== null) {
    const object = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const member = object[key];
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
    }
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}
