// Generated Registry values: valid documents, mutations of them, random JSON and random bytes,
// each also gzip-compressed, truncated or padded, as a leader (or a bug in one) might write them.

import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { REGISTRY_API_VERSION } from "../support/world.ts";

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const hostname = fc.oneof(
  fc.array(label, { minLength: 2, maxLength: 4 }).map((ls) => ls.join(".")),
  fc.array(label, { minLength: 2, maxLength: 3 }).map((ls) => `*.${ls.join(".")}`),
  fc.constantFrom("SHOP.Example.COM.", "bücher.example", "xn--bcher-kva.example"),
);
const unknownFields = fc.dictionary(
  fc
    .string({ maxLength: 8 })
    .filter(
      (k) =>
        ![
          "name",
          "hostnames",
          "secretRef",
          "upstream",
          "credential",
          "secretReady",
          "apiVersion",
          "apps",
          "namespace",
          "key",
        ].includes(k),
    ),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 2 },
);

/** A valid Registry document (unique App names), with unknown fields sprinkled in. */
export const validDocument = fc
  .uniqueArray(
    fc.record({
      name: label,
      hostnames: fc.array(hostname, { minLength: 1, maxLength: 3 }),
      secretRef: fc.record(
        {
          namespace: label,
          name: fc.array(label, { minLength: 1, maxLength: 2 }).map((ls) => ls.join(".")),
          key: fc.stringMatching(/^[-_a-zA-Z0-9][-._a-zA-Z0-9]{0,15}$/),
        },
        { requiredKeys: ["name", "key"] },
      ),
      upstream: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      // Prefixes past the 64-character cap, or with a byte other than space and visible ASCII,
      // refuse their App alone.
      credential: fc.option(
        fc.record(
          { prefix: fc.string({ maxLength: 70, unit: "binary-ascii" }) },
          { requiredKeys: [] },
        ),
        { nil: undefined },
      ),
      secretReady: fc.option(fc.boolean(), { nil: undefined }),
      extra: unknownFields,
    }),
    { selector: (a) => a.name, maxLength: 6 },
  )
  .chain((apps) =>
    unknownFields.map((extra) => ({
      apiVersion: REGISTRY_API_VERSION,
      ...extra,
      apps: apps.map(({ extra: e, upstream, credential, secretReady, ...a }) => ({
        ...e,
        ...a,
        ...(upstream === undefined ? {} : { upstream }),
        ...(credential === undefined ? {} : { credential }),
        ...(secretReady === undefined ? {} : { secretReady }),
      })),
    })),
  );

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path into a JSON value, root first. */
function paths(v: Json, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) out.push(...paths(x, [...at, i]));
  } else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function update(
  v: Json,
  path: readonly (string | number)[],
  f: (x: Json) => Json | undefined,
): Json {
  if (path.length === 0) return f(v) ?? null;
  const [head, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    const next = update(copy[head as number] ?? null, rest, f);
    if (rest.length === 0 && f(copy[head as number] ?? null) === undefined)
      copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  if (v !== null && typeof v === "object") {
    const copy: { [k: string]: Json } = { ...v };
    if (rest.length === 0 && f(copy[head as string] ?? null) === undefined)
      delete copy[head as string];
    else copy[head as string] = update(copy[head as string] ?? null, rest, f);
    return copy;
  }
  return v;
}

const weird = fc.constantFrom<Json>(
  "",
  " ",
  "shop.example.com:8080",
  "*.*.example.com",
  "[::1]",
  "\u0000",
  "\ud800",
  "é".repeat(70),
  "a".repeat(300),
  -1,
  1e308,
  0.5,
  true,
  {},
  [],
  "replica-mirror/v2",
  "__proto__",
);

/** One edit somewhere in a document: delete, replace, retype, duplicate. */
type Edit = { readonly at: number; readonly kind: number; readonly value: Json };
const edit: fc.Arbitrary<Edit> = fc.record({
  at: fc.nat(),
  kind: fc.nat({ max: 5 }),
  value: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
    weird,
    fc.string({ unit: "binary", maxLength: 12 }),
  ),
});

function applyEdit(doc: Json, e: Edit): Json {
  const all = paths(doc);
  const path = all[e.at % all.length]!;
  switch (e.kind) {
    case 0:
      return update(doc, path, () => undefined);
    case 1:
      return update(doc, path, () => e.value);
    case 2:
      // A wrong type of the same "shape": string <-> number, array <-> object.
      return update(doc, path, (x) =>
        typeof x === "string"
          ? x.length
          : typeof x === "number"
            ? String(x)
            : Array.isArray(x)
              ? { ...x }
              : x !== null && typeof x === "object"
                ? Object.values(x)
                : [x],
      );
    case 3:
      return update(doc, path, (x) => (Array.isArray(x) ? [...x, ...x] : x));
    case 4:
      return update(doc, path, (x) =>
        typeof x === "string" ? `${x}${JSON.stringify(e.value) ?? ""}` : x,
      );
    default:
      // An own "__proto__" key, as JSON.parse creates one.
      return update(doc, path, (x) =>
        x !== null && typeof x === "object" && !Array.isArray(x)
          ? Object.defineProperty({ ...x }, "__proto__", {
              value: e.value,
              enumerable: true,
              writable: true,
              configurable: true,
            })
          : x,
      );
  }
}

/** A valid document with 1–4 edits applied. */
export const mutatedDocument = fc
  .tuple(validDocument, fc.array(edit, { minLength: 1, maxLength: 4 }))
  .map(([doc, edits]) => edits.reduce(applyEdit, doc as Json));

/** How a document's text is turned into the stored bytes. */
const encoding = fc.oneof(
  { weight: 6, arbitrary: fc.constant((t: Buffer) => t) },
  { weight: 3, arbitrary: fc.constant((t: Buffer) => gzipSync(t)) },
  {
    weight: 1,
    arbitrary: fc.nat().map((n) => (t: Buffer) => {
      const z = gzipSync(t);
      return z.subarray(0, n % z.length);
    }),
  },
  { weight: 1, arbitrary: fc.nat().map((n) => (t: Buffer) => t.subarray(0, n % (t.length + 1))) },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 8 })
      .map((junk) => (t: Buffer) => Buffer.concat([gzipSync(t), junk])),
  },
  {
    weight: 1,
    arbitrary: fc.constant((t: Buffer) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), t])),
  },
  { weight: 1, arbitrary: fc.constant((t: Buffer) => Buffer.from(t.toString("utf8"), "utf16le")) },
  {
    weight: 1,
    arbitrary: fc.constant((t: Buffer) => Buffer.from(JSON.stringify(t.toString("utf8")))),
  },
);

const text = (v: unknown) => Buffer.from(JSON.stringify(v) ?? "null");

/** Any value a Registry Secret's key might hold. */
export const registryValue: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(validDocument, encoding).map(([d, enc]) => enc(text(d))) },
  { weight: 5, arbitrary: fc.tuple(mutatedDocument, encoding).map(([d, enc]) => enc(text(d))) },
  { weight: 2, arbitrary: fc.tuple(fc.jsonValue(), encoding).map(([d, enc]) => enc(text(d))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((b) => Buffer.concat([Buffer.from([0x1f, 0x8b]), b])),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s)),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 3000 })
      .map((depth) =>
        Buffer.from(
          `{"apiVersion":"${REGISTRY_API_VERSION}","apps":${"[".repeat(depth)}${"]".repeat(depth)}}`,
        ),
      ),
  },
);
