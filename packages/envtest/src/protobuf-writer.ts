/**
 * The protobuf wire format, write side: varints, tags, length-delimited fields and nested messages,
 * into one growing buffer. Fields are written in the order they are called, so a message encoder
 * decides the field order (Go's generated marshallers write ascending field numbers).
 */

const WIRE_VARINT = 0;
const WIRE_BYTES = 2;

/** The bytes of a length-delimited field's head: its tag and the varint of its length. */
export function bytesFieldHead(field: number, length: number): Buffer {
  return new ProtoWriter(16).head(field, length).finish();
}

export class ProtoWriter {
  #buf: Buffer;
  #len = 0;

  constructor(initialSize = 256) {
    this.#buf = Buffer.allocUnsafe(initialSize);
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  /** An unsigned varint, exact up to 2^53. */
  varint(v: number): this {
    this.#reserve(10);
    let x = v;
    while (x >= 0x80) {
      this.#buf[this.#len++] = (x % 128) | 0x80;
      x = Math.floor(x / 128);
    }
    this.#buf[this.#len++] = x;
    return this;
  }

  #tag(field: number, wireType: number): this {
    return this.varint(field * 8 + wireType);
  }

  /**
   * An int64 or int32 field. Negative values take ten bytes, two's complement, as Go writes them
   * (a time before 1970, say).
   */
  int(field: number, v: number): this {
    this.#tag(field, WIRE_VARINT);
    if (v >= 0) return this.varint(v);
    let x = BigInt.asUintN(64, BigInt(v));
    this.#reserve(10);
    while (x >= 0x80n) {
      this.#buf[this.#len++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.#buf[this.#len++] = Number(x);
    return this;
  }

  /** The head of a length-delimited field whose `length` bytes are written elsewhere. */
  head(field: number, length: number): this {
    return this.#tag(field, WIRE_BYTES).varint(length);
  }

  bool(field: number, v: boolean): this {
    return this.#tag(field, WIRE_VARINT).varint(v ? 1 : 0);
  }

  /** A bytes field, written even when empty. */
  bytes(field: number, b: Uint8Array): this {
    this.head(field, b.length);
    this.#reserve(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
    return this;
  }

  /** A string field, written even when empty (Go writes every non-pointer string). */
  string(field: number, s: string): this {
    const n = Buffer.byteLength(s);
    this.head(field, n);
    this.#reserve(n);
    this.#len += this.#buf.write(s, this.#len, "utf8");
    return this;
  }

  /** A nested message, built by `build` into a writer of its own, then copied in. */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter(64);
    build(inner);
    return this.bytes(field, inner.view());
  }

  /** A map<string, V> entry: a message { key = 1, value = 2 }. */
  mapEntry(field: number, key: string, value: string | Uint8Array): this {
    return this.message(field, (e) => {
      e.string(1, key);
      if (typeof value === "string") e.string(2, value);
      else e.bytes(2, value);
    });
  }

  /** How many bytes have been written. */
  get length(): number {
    return this.#len;
  }

  /** The bytes written so far, sharing this writer's memory. */
  view(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }

  /** The bytes written so far, in a buffer of their own and exactly their size. */
  finish(): Buffer {
    return Buffer.from(this.view());
  }
}
