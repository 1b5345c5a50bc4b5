// A JSON SecretList body as a ListReader: list-splitter cuts items out of the bytes, each is parsed
// and decoded as soon as it is complete.

import { parseJson } from "../../json.ts";
import { err, ok } from "../../result.ts";
import type { SecretObject } from "../cache/list-watch.ts";
import type { ListReader } from "./list-reader.ts";
import { createListSplitter } from "./list-splitter.ts";
import { decodeListMetadata, decodeSecret } from "./wire.ts";

/** A reader for one JSON list body. */
export function createJsonListReader(): ListReader {
  const splitter = createListSplitter();
  let index = 0;
  return {
    push(chunk) {
      const split = splitter.push(chunk);
      if ("message" in split) return err(split.message);
      const items: SecretObject[] = [];
      for (const text of split.items) {
        const what = `SecretList item ${index}`;
        const json = parseJson(what, text);
        const secret = json.ok ? decodeSecret(json.value, what) : json;
        if (!secret.ok) return err(secret.error.message);
        index++;
        items.push(secret.value);
      }
      return ok(items);
    },
    end() {
      const envelope = splitter.end();
      if ("message" in envelope) return err(envelope.message);
      if (envelope.metadata === null) return err("SecretList: required at metadata");
      const metadata = parseJson("SecretList metadata", envelope.metadata);
      const page = metadata.ok ? decodeListMetadata(metadata.value) : metadata;
      return page.ok ? ok(page.value) : err(page.error.message);
    },
  };
}
