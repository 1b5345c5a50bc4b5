/** The operations a chaos run applies, as plain values, and their one-line descriptions. */
import type { AppDef } from "./model.ts";

/** The ways the generator breaks the Registry value. */
export type BadRegistry =
  | "not-json"
  | "port"
  | "duplicate-name"
  | "wrong-type"
  | "no-hostnames"
  | "api-version"
  | "bad-secret-key"
  | "key-missing"
  | "bad-gzip";

export type Op =
  // The cluster.
  | { readonly op: "registry"; readonly apps: readonly AppDef[]; readonly gzip: boolean }
  | { readonly op: "registry-bad"; readonly variant: BadRegistry; readonly apps: readonly AppDef[] }
  | { readonly op: "registry-delete" }
  | {
      readonly op: "secret";
      readonly namespace: string;
      readonly name: string;
      readonly data: Readonly<Record<string, string>>;
    }
  | { readonly op: "secret-delete"; readonly namespace: string; readonly name: string }
  // The API server.
  | { readonly op: "drop-watches" }
  | { readonly op: "end-watches" }
  | { readonly op: "stall"; readonly on: boolean }
  | { readonly op: "compact" }
  | {
      readonly op: "fail";
      readonly verb: "list" | "watch";
      readonly count: number;
      readonly status: 500 | 429;
      readonly retryAfterSeconds?: number;
    }
  | { readonly op: "chunking"; readonly mode: "split" | "coalesce"; readonly seed: number }
  | { readonly op: "garbage"; readonly kind: "bytes" | "truncated" | "non-json" }
  | { readonly op: "latency"; readonly ms: number }
  | { readonly op: "restart"; readonly downMs: number }
  // A replica.
  /** Stops a sidecar (or crashes it: its files as they were), and starts it again from its state file. */
  | {
      readonly op: "replica-restart";
      readonly sidecar: string;
      readonly downMs: number;
      readonly crash: boolean;
    }
  // Time.
  | { readonly op: "wait"; readonly ms: number }
  /** Faults off; every sidecar must converge on the model, and a new window of states starts. */
  | { readonly op: "quiesce" };

function describeApp(a: AppDef): string {
  const ns = a.secret.namespace === null ? "" : `${a.secret.namespace}/`;
  const up = a.upstream === null ? "" : ` up=${a.upstream}`;
  const credential =
    a.credential === null ? "" : ` credential=${JSON.stringify(a.credential.prefix)}`;
  return `${a.name}[${a.hostnames.join(" ")}]→${ns}${a.secret.name}:${a.secret.key}${up}${credential}${a.extras ? " +extras" : ""}`;
}

/** One line per operation, complete enough to replay it by hand. */
export function describeOp(op: Op): string {
  switch (op.op) {
    case "registry":
      return `registry${op.gzip ? " (gzip)" : ""} {${op.apps.map(describeApp).join(", ")}}`;
    case "registry-bad":
      return `registry-bad ${op.variant}`;
    case "registry-delete":
      return "registry-delete";
    case "secret":
      return `secret ${op.namespace}/${op.name} ${JSON.stringify(op.data)}`;
    case "secret-delete":
      return `secret-delete ${op.namespace}/${op.name}`;
    case "fail":
      return `fail ${op.verb} x${op.count} ${op.status}${op.retryAfterSeconds === undefined ? "" : ` retry-after=${op.retryAfterSeconds}s`}`;
    case "chunking":
      return `chunking ${op.mode} seed=${op.seed}`;
    case "garbage":
      return `garbage ${op.kind}`;
    case "latency":
      return `latency ${op.ms}ms`;
    case "restart":
      return `restart (down ${op.downMs}ms)`;
    case "replica-restart":
      return `replica-restart ${op.sidecar}${op.crash ? " (crash)" : ""} (down ${op.downMs}ms)`;
    case "wait":
      return `wait ${op.ms}ms`;
    case "stall":
      return `stall ${op.on ? "on" : "off"}`;
    default:
      return op.op;
  }
}
