// The HTTP ListWatch for Secrets: URLs and query parameters over a KubeTransport.

import { err, ok } from "../result.ts";
import type { KubeTransport } from "./http-transport.ts";
import type { ListWatch, ListWatchScope } from "./list-watch.ts";
import { createWatchStream } from "./watch-stream.ts";
import { decodeSecret, decodeSecretList } from "./wire.ts";

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
    async list({ limit, continue: token, signal }) {
      const query = selectorQuery(scope);
      if (limit !== undefined) query.set("limit", String(limit));
      if (token !== undefined) query.set("continue", token);
      const body = await transport.getJson(path, query, signal);
      if (!body.ok) return body;
      const page = decodeSecretList(body.value);
      return page.ok ? page : err({ kind: "decode", message: page.error.message });
    },
    async watch({ resourceVersion, timeoutSeconds, signal, onActivity }) {
      const query = selectorQuery(scope);
      query.set("watch", "1");
      query.set("allowWatchBookmarks", "true");
      query.set("resourceVersion", resourceVersion);
      query.set("timeoutSeconds", String(timeoutSeconds));
      const opened = await transport.openStream(path, query, signal);
      if (!opened.ok) return opened;
      return ok(createWatchStream(opened.value, signal, onActivity));
    },
    async get(namespace, name, signal) {
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
