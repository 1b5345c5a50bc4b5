// A protobuf watch response (`application/vnd.kubernetes.protobuf;stream=watch`), as
// kube-apiserver writes it for any client that asks for protobuf: frames of a 4-byte big-endian
// length and a metav1.WatchEvent { type 1, object 2 } written without an envelope (apimachinery's
// protobuf RawSerializer, framed by its LengthDelimitedFramer); `object` is a RawExtension
// { raw 1 } holding the object as a GET answers it, magic and envelope included. Decoded into the
// same events as the JSON lines (wire.ts); failures name where, never a value.

import { err, ok, type Result } from "../../result.ts";
import type { WatchEvent } from "../cache/list-watch.ts";
import {
  decodeSecretMessage,
  decodeStatusBody,
  RECURRING,
  readEnvelope,
} from "./protobuf-objects.ts";
import { LENGTH_DELIMITED, WireReader } from "./protobuf-wire.ts";

/** A complete frame (its WatchEvent's bytes), or one refused by its announced length. */
export type Frame =
  | { readonly kind: "frame"; readonly body: Buffer }
  | { readonly kind: "overlong"; readonly bytes: number };

/** Cuts frames out of a body that arrives in chunks split anywhere. */
interface FrameSplitter {
  /** The frames this chunk completes, in order; nothing after an overlong one. */
  push(chunk: Buffer): Frame[];
  /** Bytes of an incomplete frame left when the body ended (0: it ended between frames). */
  end(): number;
}

const HEAD = 4;
/** As for JSON lines: a Secret is at most 1 MiB of data; a longer frame is not a Secret event. */
const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * A splitter that keeps at most one partial frame; frames inside a chunk are handed on as views
 * of it (decoding copies what it keeps). Once a length passes the cap, framing is lost: it
 * reports `overlong` and nothing more.
 */
export function createFrameSplitter(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): FrameSplitter {
  let partial = EMPTY;
  let lost = false;
  const overlong = (bytes: number): Frame[] => {
    lost = true;
    partial = EMPTY;
    return [{ kind: "overlong", bytes }];
  };
  return {
    push(chunk) {
      if (lost) return [];
      const out: Frame[] = [];
      let rest = chunk;
      if (partial.length > 0) {
        // Joins only what completes the partial frame, never the whole chunk.
        if (partial.length < HEAD) {
          const take = Math.min(HEAD - partial.length, rest.length);
          partial = Buffer.concat([partial, rest.subarray(0, take)]);
          rest = rest.subarray(take);
          if (partial.length < HEAD) return out;
        }
        const length = partial.readUInt32BE(0);
        if (length > maxFrameBytes) return overlong(length);
        const need = HEAD + length - partial.length;
        const take = Math.min(need, rest.length);
        partial = Buffer.concat([partial, rest.subarray(0, take)]);
        rest = rest.subarray(take);
        if (take < need) return out;
        out.push({ kind: "frame", body: partial.subarray(HEAD) });
        partial = EMPTY;
      }
      let pos = 0;
      while (rest.length - pos >= HEAD) {
        const length = rest.readUInt32BE(pos);
        if (length > maxFrameBytes) return [...out, ...overlong(length)];
        if (rest.length - pos - HEAD < length) break;
        out.push({ kind: "frame", body: rest.subarray(pos + HEAD, pos + HEAD + length) });
        pos += HEAD + length;
      }
      // A copy: the chunk is not kept alive for the bytes of one frame.
      if (pos < rest.length) partial = Buffer.from(rest.subarray(pos));
      return out;
    },
    end() {
      return partial.length;
    },
  };
}

const EMPTY = Buffer.alloc(0);

interface DecodeFailure {
  readonly message: string;
}

/** The annotation that ends a streaming list's initial events. */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** Decodes one frame's WatchEvent. */
export function decodeWatchFrame(body: Buffer): Result<WatchEvent, DecodeFailure> {
  const r = new WireReader(body);
  let type = "";
  let raw: { start: number; end: number } | undefined;
  while (r.more) {
    const tag = r.varint();
    if (tag === (1 << 3) + LENGTH_DELIMITED) type = RECURRING.read(r);
    else if (tag === (2 << 3) + LENGTH_DELIMITED) {
      const extension = r.message();
      while (extension.more) {
        const t = extension.varint();
        if (t === (1 << 3) + LENGTH_DELIMITED) {
          const start = extension.span();
          raw = { start, end: extension.pos };
        } else extension.skip(t & 7);
      }
      if (extension.failure !== null) r.fail(extension.failure);
    } else r.skip(tag & 7);
  }
  if (r.failure !== null) return err({ message: `watch event: ${r.failure}` });
  if (raw === undefined) return err({ message: "watch event: required at object" });
  // The object is read in place: no Buffer view per event.
  const { start, end } = raw;
  switch (type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED": {
      const what = `${type} object`;
      const inner = unwrap(body, start, end, "Secret", what);
      const secret = inner.ok ? decodeSecretMessage(inner.value, what) : inner;
      return secret.ok ? ok({ type, object: secret.value }) : secret;
    }
    case "BOOKMARK":
      return bookmarkIn(body, start, end);
    case "ERROR": {
      const status = decodeStatusBody(body.subarray(start, end));
      return status.ok ? ok({ type, status: status.value }) : status;
    }
    default:
      return err({ message: "watch event: invalid_value at type" });
  }
}

/** The message inside the envelope at `buf[start, end)`, when the envelope names `kind`. */
function unwrap(
  buf: Buffer,
  start: number,
  end: number,
  kind: string,
  what: string,
): Result<WireReader, DecodeFailure> {
  const envelope = readEnvelope(buf, start, end);
  if (envelope === null) return err({ message: `${what}: not a Kubernetes protobuf object` });
  const { kind: named, inner, r } = envelope;
  if (r.failure !== null) return err({ message: `${what}: ${r.failure}` });
  if (named !== kind || inner === undefined)
    return err({ message: `${what}: holds a ${named || "nameless"} object, not a ${kind}` });
  return ok(inner);
}

/** A BOOKMARK's Secret: only its metadata's resourceVersion (6) and annotations (12) matter. */
function bookmarkIn(buf: Buffer, start: number, end: number): Result<WatchEvent, DecodeFailure> {
  const what = "BOOKMARK object";
  const inner = unwrap(buf, start, end, "Secret", what);
  if (!inner.ok) return inner;
  const secret = inner.value;
  let resourceVersion = "";
  let ended = false;
  while (secret.more) {
    const tag = secret.varint();
    if (tag !== (1 << 3) + LENGTH_DELIMITED) {
      secret.skip(tag & 7);
      continue;
    }
    const meta = secret.message();
    while (meta.more) {
      const t = meta.varint();
      if (t === (6 << 3) + LENGTH_DELIMITED) resourceVersion = meta.string();
      else if (t === (12 << 3) + LENGTH_DELIMITED) {
        const entry = meta.message();
        ended = initialEventsEnd(entry) || ended;
        if (entry.failure !== null) meta.fail(entry.failure);
      } else meta.skip(t & 7);
    }
    if (meta.failure !== null) secret.fail(meta.failure);
  }
  if (secret.failure !== null) return err({ message: `${what}: ${secret.failure}` });
  if (resourceVersion === "")
    return err({ message: `${what}: required at metadata.resourceVersion` });
  return ok(
    ended
      ? { type: "BOOKMARK", resourceVersion, initialEventsEnd: true }
      : { type: "BOOKMARK", resourceVersion },
  );
}

/** Whether one annotations entry { key 1, value 2 } is `k8s.io/initial-events-end: "true"`. */
function initialEventsEnd(entry: WireReader): boolean {
  let key = "";
  let value = "";
  while (entry.more) {
    const t = entry.varint();
    if (t === (1 << 3) + LENGTH_DELIMITED) key = entry.string();
    else if (t === (2 << 3) + LENGTH_DELIMITED) value = entry.string();
    else entry.skip(t & 7);
  }
  return entry.failure === null && key === INITIAL_EVENTS_END && value === "true";
}
