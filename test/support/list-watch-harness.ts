// A createListWatch client against a scripted API stub, closed after each test.

import { afterEach } from "vitest";
import type {
  ListWatch,
  ListWatchScope,
  WatchItem,
  WatchOptions,
  WatchStream,
} from "../../src/kube/cache/list-watch.ts";
import { createListWatch } from "../../src/kube/rest/client.ts";
import { loadKubeConfig } from "../../src/kube/rest/kubeconfig.ts";
import { createKubeTransport, type KubeTransport } from "../../src/kube/rest/transport.ts";
import { type ApiStub, type StubHandler, startApiStub } from "./api-server-stub.ts";

export const open: { stub: ApiStub; transport: KubeTransport }[] = [];

afterEach(async () => {
  for (const { stub, transport } of open.splice(0)) {
    transport.close();
    await stub.close();
  }
});

/** Starts a stub running handler and a ListWatch for scope over the kubeconfig it wrote. */
export async function connect(
  handler: StubHandler,
  scope: ListWatchScope = { namespace: "ns1" },
): Promise<{ stub: ApiStub; lw: ListWatch; transport: KubeTransport }> {
  const stub = await startApiStub(handler);
  const loaded = loadKubeConfig(stub.kubeconfigPath);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const transport = createKubeTransport(loaded.value.kubeConfig);
  if (!transport.ok) throw new Error(transport.error.message);
  open.push({ stub, transport: transport.value });
  return { stub, lw: createListWatch(transport.value, scope), transport: transport.value };
}

/** Opens a watch (from resourceVersion 1, timeout 5 s unless `options` say); throws if refused. */
export async function openWatch(
  lw: ListWatch,
  options: Partial<WatchOptions> = {},
): Promise<WatchStream> {
  const opened = await lw.watch({
    resourceVersion: "1",
    timeoutSeconds: 5,
    signal: new AbortController().signal,
    ...options,
  });
  if (!opened.ok) throw new Error(`watch failed: ${opened.error.kind}`);
  return opened.value;
}

/** Every item of a stream until it ends. */
export async function drain(stream: WatchStream): Promise<WatchItem[]> {
  const items: WatchItem[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** A Secret as the API sends it, with fields the decoder drops. */
export const wireSecret = (name: string, rv: string) => ({
  kind: "Secret",
  apiVersion: "v1",
  metadata: { namespace: "ns1", name, resourceVersion: rv, managedFields: [{ manager: "x" }] },
  type: "Opaque",
  data: { token: "dG9rZW4=" },
});

/** wireSecret as decoded: its base64 value as the bytes it stands for. */
export const secret = (name: string, rv: string) => ({
  metadata: { namespace: "ns1", name, resourceVersion: rv },
  type: "Opaque",
  data: { token: "token" },
});

export const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const scope = {
  namespace: "ns1",
  labelSelector: "app=shop",
  fieldSelector: "metadata.name=reg",
};
