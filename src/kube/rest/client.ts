// The HTTP ListWatch for Secrets: URLs and query parameters over a KubeTransport.

import { err, ok, type Result } from "../../result.ts";
import type { ApiError, ListWatch, ListWatchScope, SecretObject } from "../cache/list-watch.ts";
import { decodeSecret } from "../codec/wire.ts";
import { readList } from "./list-stream.ts";
import type { KubeTransport } from "./transport.ts";
import { createWatchStream } from "./watch-stream.ts";

const segment = encodeURIComponent;

function collectionPath(namespace: string | undefined): string {
  return namespace === undefined
    ? "/api/v1/secrets"
    : `/api/v1/namespaces/${segment(namespace)}/secrets`;
}

function selectorQuery(scope: ListWatchScope): URLSearchParams {
  const query = new URLSearchParams();
  if (scope.labelSelector) query.set("labelSelector", scope.labelSelector);
  if (scope.fieldSelector) query.set("fieldSelector", scope.fieldSelector);
  return query;
}

/**
 * A ListWatch over the Secrets of scope. Several ListWatches can share one transport (one
 * connection pool); closing the transport is the owner's job.
 */
export function createListWatch(transport: KubeTransport, scope: ListWatchScope): ListWatch {
  const path = collectionPath(scope.namespace);
  return {
    async list({ resourceVersion, limit, continue: token, signal, onActivity }, onItem) {
      const query = selectorQuery(scope);
      if (resourceVersion !== undefined) query.set("resourceVersion", resourceVersion);
      if (limit !== undefined) query.set("limit", String(limit));
      if (token !== undefined) query.set("continue", token);
      // Protobuf first (ADR 23): a third fewer bytes than JSON for the API server to send.
      const opened = await transport.openStream(path, query, signal, {
        pooled: true,
        accept: "protobuf-or-json",
      });
      if (!opened.ok) return opened;
      return readList(opened.value, signal, onItem, onActivity);
    },
    async watch({ resourceVersion, sendInitialEvents, timeoutSeconds, signal, onActivity }) {
      const query = selectorQuery(scope);
      query.set("watch", "1");
      query.set("allowWatchBookmarks", "true");
      if (sendInitialEvents === true) {
        query.set("sendInitialEvents", "true");
        query.set("resourceVersionMatch", "NotOlderThan");
        // Absent, not empty: the latest state, read consistently, as client-go sends it.
        if (resourceVersion !== "") query.set("resourceVersion", resourceVersion);
      } else {
        query.set("resourceVersion", resourceVersion);
      }
      query.set("timeoutSeconds", String(timeoutSeconds));
      // Protobuf first (ADR 65): no JSON parse or base64 per event; a server may answer JSON.
      const opened = await transport.openStream(path, query, signal, {
        accept: "protobuf-or-json",
      });
      if (!opened.ok) return opened;
      return ok(createWatchStream(opened.value, signal, onActivity));
    },
    async get(namespace, name, signal) {
      if (scope.labelSelector)
        return getSelected(transport, namespace, name, scope.labelSelector, signal);
      const body = await transport.getJson(
        `${collectionPath(namespace)}/${segment(name)}`,
        new URLSearchParams(),
        signal,
      );
      if (!body.ok)
        return body.error.kind === "http" && body.error.status === 404 ? ok(null) : body;
      const secret = decodeSecret(body.value);
      return secret.ok ? secret : err({ kind: "decode", message: secret.error.message });
    },
  };
}

/**
 * A GET that honours a label selector: a list of the namespace selecting the one name, which the
 * API server filters by both selectors and answers with at most one item, at the cost of a GET.
 */
async function getSelected(
  transport: KubeTransport,
  namespace: string,
  name: string,
  labelSelector: string,
  signal: AbortSignal,
): Promise<Result<SecretObject | null, ApiError>> {
  const query = new URLSearchParams({ labelSelector, fieldSelector: `metadata.name=${name}` });
  const opened = await transport.openStream(collectionPath(namespace), query, signal, {
    pooled: true,
    accept: "protobuf-or-json",
  });
  if (!opened.ok) return opened;
  let found: SecretObject | null = null;
  const page = await readList(opened.value, signal, (item) => {
    if (item.metadata.name === name) found = item;
  });
  return page.ok ? ok(found) : page;
}
