// What a suite started, given back in the order named: servers, relays and pushers closed,
// proxies stopped, temporary directories removed. One never started (its beforeAll failed before
// it) is undefined and skipped.

import { rm } from "node:fs/promises";

type Resource = { close(): Promise<unknown> } | { stop(): Promise<unknown> } | string | undefined;

export async function release(...resources: Resource[]): Promise<void> {
  for (const r of resources) {
    if (r === undefined || r === "") continue;
    if (typeof r === "string") await rm(r, { recursive: true, force: true });
    else if ("close" in r) await r.close();
    else await r.stop();
  }
}
