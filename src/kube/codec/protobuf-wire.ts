// The protobuf wire format as Kubernetes writes it (proto2, gogo-generated), read-only: varints,
// length-delimited fields, and skipping what is not read. Malformed input is a value: the reader
// records the first failure and reads nothing after it, so a decoder checks once, at its end.

/** The media type a client asks for to get Kubernetes' protobuf encoding. */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/** Whether a response's Content-Type is Kubernetes' protobuf encoding. */
export function isProtobuf(contentType: string | undefined): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

/** The four bytes every Kubernetes protobuf body starts with: "k8s" and a zero. */
export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/**
 * Buffer's own decoders, which `toString(encoding, start, end)` calls after checking its
 * arguments: called directly, a watch event's six short strings cost a tenth less to decode.
 */
interface Slicing {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
}

/** A cursor over one message, `buf[pos, end)`. */
export class WireReader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;
  /** The first malformation met, if any; once set, every read returns a zero value. */
  failure: string | null = null;

  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  /** Whether a field remains to be read. */
  get more(): boolean {
    return this.failure === null && this.pos < this.end;
  }

  fail(message: string): void {
    this.failure ??= message;
    this.pos = this.end;
  }

  /** An unsigned varint, exact up to 2^53 (lengths, field keys, counts and timestamps). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10 && this.pos < this.end; i++) {
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
    this.fail("truncated or overlong varint");
    return 0;
  }

  /** Moves past a length-delimited value and returns where it starts; it ends at `pos`. */
  span(): number {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) {
      this.fail("length-delimited field runs past its message");
      return this.end;
    }
    this.pos = start + length;
    return start;
  }

  /** A length-delimited value as UTF-8 text. */
  string(): string {
    const start = this.span();
    return this.failure === null ? (this.buf as Buffer & Slicing).utf8Slice(start, this.pos) : "";
  }

  /** A length-delimited value as a byte string, one character per byte. */
  bytes(): string {
    const start = this.span();
    return this.failure === null ? (this.buf as Buffer & Slicing).latin1Slice(start, this.pos) : "";
  }

  /** A reader over a nested message. */
  message(): WireReader {
    const start = this.span();
    return new WireReader(this.buf, start, this.failure === null ? this.pos : start);
  }

  /** Skips one field's value of the given wire type; groups are refused (Kubernetes has none). */
  skip(wireType: number): void {
    if (wireType === VARINT) this.varint();
    else if (wireType === LENGTH_DELIMITED) this.span();
    else if (wireType === FIXED64 || wireType === FIXED32) {
      const size = wireType === FIXED64 ? 8 : 4;
      if (size > this.end - this.pos) this.fail("fixed-size field runs past its message");
      else this.pos += size;
    } else this.fail(`unsupported wire type ${wireType}`);
  }
}

/** Bytes up to which a value may be interned: event types, kinds, namespaces, keys. */
const MAX_INTERNED_BYTES = 64;
const INTERNED_SLOTS = 1024;

/**
 * Short texts that recur in every event (its type, the object's kind and namespace, its keys),
 * each decoded once: the same bytes give back the same string, where a decode per event was a
 * native call and a string to hash for every Map it keys. Bounded: a slot holds the last text
 * whose bytes hashed to it, so a text met once (a name) costs one slot and displaces another.
 */
export class Interned {
  readonly #bytes: (Uint8Array | null)[] = new Array(INTERNED_SLOTS).fill(null);
  readonly #texts: string[] = new Array(INTERNED_SLOTS).fill("");

  /** A length-delimited value as UTF-8 text, as `r.string()` reads it. */
  read(r: WireReader): string {
    const start = r.span();
    if (r.failure !== null) return "";
    const { buf } = r;
    const end = r.pos;
    const length = end - start;
    if (length > MAX_INTERNED_BYTES) return (buf as Buffer & Slicing).utf8Slice(start, end);
    let hash = length;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ buf[i]!, 0x01000193);
    const slot = hash & (INTERNED_SLOTS - 1);
    const known = this.#bytes[slot];
    if (known !== null && known !== undefined && known.length === length) {
      let i = 0;
      while (i < length && known[i] === buf[start + i]) i++;
      if (i === length) return this.#texts[slot]!;
    }
    const text = (buf as Buffer & Slicing).utf8Slice(start, end);
    this.#bytes[slot] = Uint8Array.prototype.slice.call(buf, start, end);
    this.#texts[slot] = text;
    return text;
  }
}

/** Whether `buf[pos…]` holds a whole varint, so a streaming reader can wait for more bytes. */
export function varintComplete(buf: Buffer, pos: number): boolean {
  const last = Math.min(buf.length, pos + 10);
  for (let i = pos; i < last; i++) if (buf[i]! < 0x80) return true;
  return last - pos >= 10;
}
