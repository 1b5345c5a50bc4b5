/** A minimal protobuf encoder for building the bodies kubectl sends, field by field. */

type Field =
  | { readonly n: number; readonly bytes: Uint8Array | string | readonly Field[] }
  | { readonly n: number; readonly varint: number }
  | { readonly n: number; readonly fixed64: true }
  | { readonly n: number; readonly fixed32: true };

function varint(v: number): number[] {
  const out: number[] = [];
  let x = v;
  while (x >= 0x80) {
    out.push((x % 128) | 0x80);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return out;
}

/** Encodes fields in order; nested messages are field arrays. */
export function encode(fields: readonly Field[]): Uint8Array {
  const out: number[] = [];
  for (const f of fields) {
    if ("varint" in f) out.push(...varint(f.n * 8), ...varint(f.varint));
    else if ("fixed64" in f) out.push(...varint(f.n * 8 + 1), 1, 2, 3, 4, 5, 6, 7, 8);
    else if ("fixed32" in f) out.push(...varint(f.n * 8 + 5), 1, 2, 3, 4);
    else {
      const b =
        typeof f.bytes === "string"
          ? Buffer.from(f.bytes)
          : f.bytes instanceof Uint8Array
            ? f.bytes
            : encode(f.bytes);
      out.push(...varint(f.n * 8 + 2), ...varint(b.length), ...b);
    }
  }
  return Uint8Array.from(out);
}

function entry(n: number, k: string, v: string | Uint8Array): Field {
  return {
    n,
    bytes: [
      { n: 1, bytes: k },
      { n: 2, bytes: v },
    ],
  };
}

/**
 * A `k8s\0` + runtime.Unknown body carrying a v1.Secret, as `kubectl create secret generic` sends.
 */
export function protobufSecret(s: {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
  extra?: readonly Field[];
}): Uint8Array {
  const meta: Field[] = [{ n: 1, bytes: s.name }];
  if (s.namespace) meta.push({ n: 3, bytes: s.namespace });
  for (const [k, v] of Object.entries(s.labels ?? {})) meta.push(entry(11, k, v));
  meta.push({ n: 8, bytes: [] });
  const secret: Field[] = [{ n: 1, bytes: meta }];
  for (const [k, v] of Object.entries(s.data ?? {})) secret.push(entry(2, k, Buffer.from(v)));
  if (s.type) secret.push({ n: 3, bytes: s.type });
  for (const [k, v] of Object.entries(s.stringData ?? {})) secret.push(entry(4, k, v));
  if (s.immutable !== undefined) secret.push({ n: 5, varint: s.immutable ? 1 : 0 });
  secret.push(...(s.extra ?? []));
  const unknown = encode([
    {
      n: 1,
      bytes: [
        { n: 1, bytes: "v1" },
        { n: 2, bytes: "Secret" },
      ],
    },
    { n: 2, bytes: encode(secret) },
    { n: 3, bytes: "" },
    { n: 4, bytes: "" },
  ]);
  return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...unknown]);
}
