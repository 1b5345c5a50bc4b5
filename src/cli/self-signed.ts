// A self-signed certificate made with node:crypto alone, for a proxy's default certificate: what
// a client gets for a name no App serves (ADR 56). Made at the pod's start by the image itself,
// so no key is ever in the repository or an image, and no third-party image runs in the pod.
// X.509 v1 (no extensions: a default certificate names nothing), ECDSA P-256 with SHA-256.

import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** A certificate and its key, both PEM. */
export interface SelfSigned {
  readonly certificate: string;
  readonly key: string;
}

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const COMMON_NAME = "2.5.4.3";

/** A new key and a certificate for `commonName`, valid from `now` (less an hour) for `days`. */
export function selfSigned(commonName: string, now: Date, days: number): SelfSigned {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  // Positive, 16 bytes: the first bit clear.
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const name = sequence(set(sequence(oid(COMMON_NAME), utf8(commonName))));
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const from = new Date(now.getTime() - 3_600_000);
  const to = new Date(now.getTime() + days * 86_400_000);
  const tbs = sequence(
    integer(serial),
    algorithm,
    name,
    sequence(time(from), time(to)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const der = sequence(tbs, algorithm, bitString(signature));
  return {
    certificate: pem("CERTIFICATE", der),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

// DER: a tag, the length (short form under 128, else 0x80 | the length's byte count), the value.
function tlv(tag: number, value: Buffer): Buffer {
  const n = value.length;
  const length =
    n < 0x80 ? Buffer.of(n) : n < 0x100 ? Buffer.of(0x81, n) : Buffer.of(0x82, n >> 8, n & 0xff);
  return Buffer.concat([Buffer.of(tag), length, value]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));
const bitString = (bytes: Buffer) => tlv(0x03, Buffer.concat([Buffer.of(0), bytes]));

function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++;
  return tlv(0x02, bytes.subarray(start));
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return at.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`, "ascii"))
    : tlv(0x18, Buffer.from(`${iso}Z`, "ascii"));
}
