// Reads a list response as it arrives: bytes → items (list-splitter) → decoded Secrets handed on
// one at a time, then the list's resourceVersion and continue token from its metadata.

import { err, ok, type Result } from "../result.ts";
import type { OpenResponse } from "./http-transport.ts";
import { createListSplitter } from "./list-splitter.ts";
import type { ApiError, ListPage, SecretObject } from "./list-watch.ts";
import { decodeListMetadata, decodeSecret, parseJson } from "./wire.ts";

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
  const splitter = createListSplitter();
  let index = 0;
  try {
    for await (const chunk of response.body) {
      onActivity?.();
      const split = splitter.push(chunk as Buffer);
      if ("message" in split) return fail(response, { kind: "decode", message: split.message });
      for (const text of split.items) {
        const json = parseJson(`SecretList item ${index}`, text);
        const secret = json.ok ? decodeSecret(json.value, `SecretList item ${index}`) : json;
        if (!secret.ok) return fail(response, { kind: "decode", message: secret.error.message });
        index++;
        onItem(secret.value);
      }
    }
  } catch (e) {
    if (signal.aborted) return err({ kind: "aborted" });
    return err({ kind: "network", message: e instanceof Error ? e.message : String(e) });
  }
  if (signal.aborted) return err({ kind: "aborted" });
  if (!response.body.complete)
    return err({ kind: "network", message: "list connection closed before the response ended" });
  const envelope = splitter.end();
  if ("message" in envelope) return err({ kind: "decode", message: envelope.message });
  if (envelope.metadata === null)
    return err({ kind: "decode", message: "SecretList: required at metadata" });
  const metadata = parseJson("SecretList metadata", envelope.metadata);
  const page = metadata.ok ? decodeListMetadata(metadata.value) : metadata;
  return page.ok ? ok(page.value) : err({ kind: "decode", message: page.error.message });
}

function fail(response: OpenResponse, error: ApiError): Result<never, ApiError> {
  response.destroy();
  return err(error);
}
