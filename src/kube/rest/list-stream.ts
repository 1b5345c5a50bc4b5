// Reads a list response as it arrives: bytes → decoded Secrets handed on one at a time, then the
// list's resourceVersion and continue token. The response's Content-Type picks the reader: the
// protobuf the mirror asks for first, or JSON, which any server may answer instead.

import { err, ok, type Result } from "../../result.ts";
import type { ApiError, ListPage, SecretObject } from "../cache/list-watch.ts";
import { createJsonListReader } from "../codec/json-list.ts";
import type { ListReader } from "../codec/list-reader.ts";
import { createProtobufListReader } from "../codec/protobuf-list.ts";
import { isProtobuf } from "../codec/protobuf-wire.ts";
import type { OpenResponse } from "./transport.ts";

/**
 * Hands each item of response to onItem, in order, as soon as it is complete, and resolves to
 * the page's resourceVersion and continue token. A malformed item or body fails the whole list
 * (`decode`), a broken connection fails it as `network`, an abort as `aborted`; items already
 * handed on stay handed on, which a relist reconciles.
 */
export async function readList(
  response: OpenResponse,
  signal: AbortSignal,
  onItem: (item: SecretObject) => void,
  onActivity?: () => void,
): Promise<Result<ListPage, ApiError>> {
  const reader: ListReader = isProtobuf(response.contentType)
    ? createProtobufListReader()
    : createJsonListReader();
  try {
    for await (const chunk of response.body) {
      onActivity?.();
      const items = reader.push(chunk as Buffer);
      if (!items.ok) return fail(response, { kind: "decode", message: items.error });
      for (const item of items.value) onItem(item);
    }
  } catch (e) {
    if (signal.aborted) return err({ kind: "aborted" });
    return err({ kind: "network", message: e instanceof Error ? e.message : String(e) });
  }
  if (signal.aborted) return err({ kind: "aborted" });
  if (!response.body.complete)
    return err({ kind: "network", message: "list connection closed before the response ended" });
  const page = reader.end();
  return page.ok ? ok(page.value) : err({ kind: "decode", message: page.error });
}

function fail(response: OpenResponse, error: ApiError): Result<never, ApiError> {
  response.destroy();
  return err(error);
}
