// Reads a protobuf SecretList body chunk by chunk: the magic, runtime.Unknown { typeMeta
// 1, raw 2, contentEncoding 3, contentType 4 } whose `raw` is the SecretList { metadata 1, items 2 }.
// Every field says its length up front, so items are cut out by length, never by scanning, and
// decoded as soon as the last byte of each arrives; nothing but one partial item is buffered.

import { err, ok } from "../../result.ts";
import type { ListPage, SecretObject } from "../cache/list-watch.ts";
import { type ListReader, MAX_ITEM_BYTES } from "./list-reader.ts";
import { decodeListMeta, decodeSecretMessage, typeMetaKind } from "./protobuf-objects.ts";
import {
  FIXED32,
  FIXED64,
  LENGTH_DELIMITED,
  MAGIC,
  VARINT,
  varintComplete,
  WireReader,
} from "./protobuf-wire.ts";

type Phase = "magic" | "envelope" | "list" | "skip";

/** A reader for one protobuf list body. */
export function createProtobufListReader(maxFieldBytes: number = MAX_ITEM_BYTES): ListReader {
  let phase: Phase = "magic";
  // The unread end of the previous chunk, at the start of a scratch buffer reused for the whole
  // body: joining it to each new chunk allocates nothing (decoded values are copies).
  let scratch = Buffer.alloc(0);
  let rest = 0;
  // Bytes of the SecretList (the envelope's `raw`) not yet read, and the phase a skip returns to.
  let listLeft = 0;
  let skipLeft = 0;
  let afterSkip: Phase = "envelope";
  let rawSeen = false;
  let page: ListPage | null = null;
  let index = 0;

  const grow = (size: number): void => {
    if (scratch.length >= size) return;
    const bigger = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
    scratch.copy(bigger, 0, 0, rest);
    scratch = bigger;
  };
  const join = (chunk: Buffer): Buffer => {
    grow(rest + chunk.length);
    chunk.copy(scratch, rest);
    return scratch.subarray(0, rest + chunk.length);
  };
  // Moves the unread bytes of buf (the chunk, or the scratch joined to it) to the scratch's start.
  const keep = (buf: Buffer, joined: boolean, pos: number): void => {
    const tail = buf.length - pos;
    if (joined) scratch.copyWithin(0, pos, buf.length);
    else {
      rest = 0;
      grow(tail);
      buf.copy(scratch, 0, pos);
    }
    rest = tail;
  };

  return {
    push(chunk) {
      const pending = rest === 0 ? chunk : join(chunk);
      const items: SecretObject[] = [];
      let pos = 0;
      for (;;) {
        if (phase === "magic") {
          if (pending.length - pos < MAGIC.length) break;
          if (!pending.subarray(pos, pos + MAGIC.length).equals(MAGIC))
            return err("list body is not a Kubernetes protobuf message");
          pos += MAGIC.length;
          phase = "envelope";
          continue;
        }
        if (phase === "skip") {
          const n = Math.min(skipLeft, pending.length - pos);
          pos += n;
          skipLeft -= n;
          if (afterSkip === "list") listLeft -= n;
          if (skipLeft > 0) break;
          phase = afterSkip;
          continue;
        }
        if (phase === "list" && listLeft === 0) {
          phase = "envelope";
          continue;
        }
        // A field: its key, then for length-delimited ones the length, then the value.
        const start = pos;
        if (!varintComplete(pending, pos)) break;
        const head = new WireReader(pending, pos);
        const tag = head.varint();
        const wireType = tag & 7;
        const field = tag >>> 3;
        let length = 0;
        if (wireType === LENGTH_DELIMITED) {
          if (!varintComplete(pending, head.pos)) break;
          length = head.varint();
        } else if (wireType === VARINT) {
          if (!varintComplete(pending, head.pos)) break;
          head.varint();
        } else if (wireType === FIXED64 || wireType === FIXED32) {
          length = wireType === FIXED64 ? 8 : 4;
        } else return err(`list body has unsupported wire type ${wireType}`);
        if (head.failure !== null) return err(`list body: ${head.failure}`);
        const valueStart = head.pos;
        const headBytes = valueStart - start;
        const inList = phase === "list";
        if (inList && headBytes + length > listLeft)
          return err("list item runs past the end of the list");
        // The envelope's `raw`: step inside it rather than buffering the whole list.
        if (!inList && field === 2 && wireType === LENGTH_DELIMITED) {
          if (rawSeen) return err("list body holds two lists");
          rawSeen = true;
          pos = valueStart;
          listLeft = length;
          phase = "list";
          continue;
        }
        const kept =
          wireType === LENGTH_DELIMITED && (inList ? field === 1 || field === 2 : field === 1);
        if (!kept && wireType !== VARINT) {
          // Unknown or unread fields are skipped as they stream past, whatever their size.
          pos = valueStart;
          if (inList) listLeft -= headBytes;
          skipLeft = length;
          afterSkip = phase;
          phase = "skip";
          continue;
        }
        if (length > maxFieldBytes) return err(`list item of ${length} bytes exceeds the limit`);
        if (pending.length - valueStart < length) break;
        pos = valueStart + length;
        if (inList) listLeft -= headBytes + length;
        if (!kept) continue;
        const value = new WireReader(pending, valueStart, pos);
        if (!inList) {
          const kind = typeMetaKind(value);
          if (kind !== "SecretList") return err(`list body holds a ${kind || "nameless"} object`);
        } else if (field === 1) {
          const meta = decodeListMeta(value);
          if (!meta.ok) return err(meta.error.message);
          page = meta.value;
        } else {
          const secret = decodeSecretMessage(value, `SecretList item ${index}`);
          if (!secret.ok) return err(secret.error.message);
          index++;
          items.push(secret.value);
        }
      }
      keep(pending, pending !== chunk, pos);
      return ok(items);
    },
    end() {
      if (phase !== "envelope" || rest > 0 || !rawSeen)
        return err("list body ended before its message did");
      if (page === null) return err("SecretList: required at metadata");
      return ok(page);
    },
  };
}
