// The baselines every end-to-end suite measures the shipped artifact against, each a plain `.mjs`
// file in baselines/ run as its own process with the same Node binary, V8 flags and environment
// as the artifact, answering the same 200 with the same three headers on `/v1/route`; and the
// route suite's per-host one, which answers each host with its own App's headers.

import { fileURLToPath } from "node:url";
import { freePort } from "./child.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

export type BaselineKind = "fastify" | "http" | "client-node" | "fastify-hosts";

export const BASELINES: readonly BaselineKind[] = ["fastify", "http", "client-node"];

/**
 * The route suite's own: bare Fastify answering each host of the bench Registry with that App's
 * headers from a Map (`args`: the answers file of `writeAnswersFile`).
 */
export const PER_HOST: BaselineKind = "fastify-hosts";

/** How a baseline reads in a table. */
export const BASELINE_LABEL: Readonly<Record<BaselineKind, string>> = {
  fastify: "bare fastify",
  http: "bare node:http",
  "client-node": "fastify + client-node import",
  "fastify-hosts": "bare fastify, per-host answers",
};

/** Starts one baseline on a free loopback port; ready once `/readyz` answers 200. */
export async function startBaseline(
  kind: BaselineKind,
  o: {
    nodeFlags: readonly string[];
    env?: Readonly<Record<string, string>>;
    args?: readonly string[];
  },
): Promise<ServerProcess> {
  const port = await freePort();
  const script = fileURLToPath(new URL(`./baselines/${kind}.mjs`, import.meta.url));
  return startServerProcess({
    name: BASELINE_LABEL[kind],
    args: [...o.nodeFlags, script, String(port), ...(o.args ?? [])],
    ...(o.env === undefined ? {} : { env: o.env }),
    dataPort: port,
  });
}
