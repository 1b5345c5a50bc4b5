/**
 * The protobuf wire format, read-only: varints, length-delimited fields, and skipping any field by
 * wire type.
 */

export class WireReader {
  readonly #buf: Uint8Array;
  #pos = 0;

  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }

  /** Whether every byte has been read. */
  get done(): boolean {
    return this.#pos >= this.#buf.length;
  }

  /** An unsigned varint; exact up to 2^53, which covers every field this server reads. */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.#buf[this.#pos++];
      if (b === undefined) throw new Error("truncated varint");
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new Error("varint longer than 10 bytes");
  }

  /** A length-delimited field's bytes (a view, not a copy). */
  bytes(): Uint8Array {
    const len = this.varint();
    if (this.#pos + len > this.#buf.length)
      throw new Error("length-delimited field runs past the end");
    const out = this.#buf.subarray(this.#pos, this.#pos + len);
    this.#pos += len;
    return out;
  }

  /** A length-delimited field as UTF-8 text. */
  string(): string {
    return Buffer.from(this.bytes()).toString("utf8");
  }

  /**
   * Skips one field's value; groups (wire types 3 and 4) are refused, as proto3 never emits them.
   */
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.bytes();
    else if (wireType === 1 || wireType === 5) this.#advance(wireType === 1 ? 8 : 4);
    else throw new Error(`unsupported wire type ${wireType}`);
  }

  #advance(n: number): void {
    if (this.#pos + n > this.#buf.length) throw new Error("fixed-width field runs past the end");
    this.#pos += n;
  }
}

/** Handlers by field number: `bytes` for length-delimited fields, `varint` for varint fields. */
interface FieldHandlers {
  readonly bytes?: Readonly<Record<number, (r: WireReader) => void>>;
  readonly varint?: Readonly<Record<number, (v: number) => void>>;
}

/**
 * Reads every field of a message; fields without a handler (or of another wire type) are skipped.
 */
export function readMessage(buf: Uint8Array, on: FieldHandlers): void {
  const r = new WireReader(buf);
  while (!r.done) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    const bytes = wireType === 2 ? on.bytes?.[field] : undefined;
    const varint = wireType === 0 ? on.varint?.[field] : undefined;
    if (bytes !== undefined) bytes(r);
    else if (varint !== undefined) varint(r.varint());
    else r.skip(wireType);
  }
}

/** Reads a map entry message (key = 1, value = 2). */
export function readMapEntry(r: WireReader): [string, Uint8Array] {
  let key = "";
  let value: Uint8Array = new Uint8Array();
  readMessage(r.bytes(), {
    bytes: {
      1: (e) => {
        key = e.string();
      },
      2: (e) => {
        value = e.bytes();
      },
    },
  });
  return [key, value];
}
