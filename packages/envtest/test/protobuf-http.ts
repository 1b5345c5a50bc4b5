/** HTTP plumbing for the protobuf answer tests: raw bodies, and the same request in both formats. */
import type { Envtest } from "../src/index.ts";

export const PROTOBUF = "application/vnd.kubernetes.protobuf";
/** What client-go sends for built-in types: protobuf first, JSON as the fallback. */
export const PROTOBUF_FIRST = `${PROTOBUF}, application/json`;

interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

/** One request, the body kept as bytes; object bodies are sent as JSON. */
export async function fetchBytes(
  env: Envtest,
  method: string,
  path: string,
  accept: string,
  body?: object,
): Promise<RawResponse> {
  const headers: Record<string, string> = { accept };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] =
      method === "PATCH" ? "application/merge-patch+json" : "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${env.url}${path}`, init);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** A Secret manifest with raw byte values, sent base64 as JSON carries them. */
export function manifest(
  name: string,
  data: Record<string, Uint8Array | string> = {},
  extra: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, ...metadata },
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    ),
    ...extra,
  };
}
