// The Apps' upstream for both variants: nginx answering `200 ok` (see configs.ts), with its
// counters of accepted connections and served requests read from `stub_status`.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../child.ts";
import { writeUpstreamConfig } from "./configs.ts";
import { type ProxyProcess, startProxy } from "./proxy-process.ts";

/** What the upstream counted so far. */
export interface UpstreamCounts {
  readonly accepts: number;
  readonly requests: number;
}

export interface Upstream {
  /** `http://127.0.0.1:PORT`, every App's `upstream`. */
  readonly url: string;
  readonly process: ProxyProcess;
  counts(): Promise<UpstreamCounts>;
  stop(): Promise<void>;
}

/** Starts the upstream's nginx (`binary`) with its scratch files under `dir`. */
export async function startUpstream(binary: string, dir: string): Promise<Upstream> {
  const own = join(dir, "upstream");
  await mkdir(own, { recursive: true });
  const [port, statusPort] = [await freePort(), await freePort()];
  const args = await writeUpstreamConfig({ dir: own, port, statusPort });
  const process = await startProxy({ name: "upstream", command: binary, args, port });
  return {
    url: `http://127.0.0.1:${port}`,
    process,
    async counts() {
      const text = await (await fetch(`http://127.0.0.1:${statusPort}/`)).text();
      return parseStubStatus(text);
    },
    stop: () => process.stop(),
  };
}

/**
 * nginx's `stub_status` page: "Active connections: N", then "server accepts handled requests"
 * and a line of the three counters.
 */
export function parseStubStatus(text: string): UpstreamCounts {
  const m = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
  if (m === null) throw new Error(`not a stub_status page: ${text.slice(0, 200)}`);
  return { accepts: Number(m[1]), requests: Number(m[3]) };
}
