/** The kubeconfig clients use to reach the fake API server, and the client each token names. */
import { stringify } from "yaml";

/** The bearer token the kubeconfig carries; the server accepts any token (or none). */
export const ENVTEST_TOKEN = "envtest-token";

const CLIENT_PREFIX = `${ENVTEST_TOKEN}.`;

/** What a kubeconfig names besides the server. */
export interface KubeconfigOptions {
  /** The context's namespace (default `default`). */
  readonly namespace?: string;
  /** Names the client in the request log: the token becomes `clientToken(client)`. */
  readonly client?: string;
}

/** The bearer token that identifies `client` in the request log; it starts with ENVTEST_TOKEN. */
export function clientToken(client: string): string {
  return `${CLIENT_PREFIX}${encodeURIComponent(client)}`;
}

/**
 * Who sent a request, for the request log: the client a `clientToken` names, else the User-Agent,
 * else "unknown". Only the token's own format is read; no token is ever recorded.
 */
export function clientOf(authorization: string | undefined, userAgent: string | undefined): string {
  const token = authorization?.startsWith("Bearer ") ? authorization.slice(7).trim() : "";
  if (token.startsWith(CLIENT_PREFIX)) {
    try {
      return decodeURIComponent(token.slice(CLIENT_PREFIX.length));
    } catch {
      // A malformed escape names no client; fall through to the user agent.
    }
  }
  return userAgent ?? "unknown";
}

/**
 * A kubeconfig with one cluster, user and context, all named `envtest`. `insecure-skip-tls-verify`
 * is always set: the certificate is self-signed when serving https, and @kubernetes/client-node
 * refuses plain http without it.
 */
export function kubeconfigYaml(server: string, options: KubeconfigOptions = {}): string {
  const token = options.client === undefined ? ENVTEST_TOKEN : clientToken(options.client);
  const namespace = options.namespace ?? "default";
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "envtest", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "envtest", user: { token } }],
    contexts: [{ name: "envtest", context: { cluster: "envtest", user: "envtest", namespace } }],
    "current-context": "envtest",
    preferences: {},
  });
}
