// `npm run fleet -- [flags]`: the suite's knobs, the full-size defaults of the issue and the
// `--quick` ones that finish in a few minutes.

import { parseArgs } from "node:util";
import { z } from "zod";

/** The scenarios, in the order a run measures them. */
export const SCENARIOS = [
  "memory",
  "watchlist",
  "start",
  "steady",
  "registry",
  "restart",
  "throttle",
] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** Everything a run is configured with. */
export interface FleetConfig {
  readonly replicas: number;
  readonly apps: number;
  readonly added: number;
  readonly secrets: number;
  readonly valueBytes: number;
  readonly steadySeconds: number;
  readonly referencedWritesPerSecond: number;
  readonly unrelatedWritesPerSecond: number;
  readonly restartDownMs: number;
  readonly throttleSeconds: number;
  readonly throttleShare: number;
  readonly retryAfterSeconds: number;
  /** The longest wait for a fleet to reach an expected state. */
  readonly convergeTimeoutSeconds: number;
  /** How long a phase waits after its action for the requests in flight to be accounted. */
  readonly settleMs: number;
  readonly scenarios: readonly Scenario[];
  /** Results go to `<scenario>-<label>.json`. */
  readonly label: string;
  readonly quick: boolean;
  /** Only render the report and charts from the results already written. */
  readonly reportOnly: boolean;
  /** The CLI every replica runs: the built artifact (default) or `src/cli/main.ts`. */
  readonly artifact: "dist" | "src";
  /** A bundle built elsewhere, run in place of `artifact` (the npm test smoke builds its own). */
  readonly entry?: string;
  /** Where the result files go (default bench/fleet/results). */
  readonly resultsDir?: string;
}

const FULL = {
  replicas: 50,
  apps: 10_000,
  added: 1_000,
  secrets: 50_000,
  steadySeconds: 240,
  throttleSeconds: 20,
  convergeTimeoutSeconds: 300,
};
const QUICK = {
  replicas: 12,
  apps: 1_000,
  added: 200,
  secrets: 5_000,
  steadySeconds: 45,
  throttleSeconds: 10,
  convergeTimeoutSeconds: 120,
};

const FLAGS = {
  replicas: "number of sidecar processes",
  apps: "Apps in the Registry at rest",
  added: "Apps a Registry edit adds (and the next removes)",
  secrets: "Secrets in the cluster, Registry and App Secrets included",
  "value-bytes": "bytes of each Secret's value (1024)",
  "steady-seconds": "length of the steady-state window",
  "referenced-writes": "writes per second to referenced App Secrets in steady state (1)",
  "unrelated-writes": "writes per second to unrelated Secrets in steady state (20)",
  "restart-down-ms": "how long the API server is down in the restart scenario (3000)",
  "throttle-seconds": "how long the API server throttles",
  "throttle-share": "share of lists and watches answered 429 while throttling (0.5)",
  "retry-after": "Retry-After of those 429s, in seconds (3)",
  "converge-timeout": "the longest wait, in seconds, for the fleet to reach a state",
  "settle-ms":
    "how long a phase waits after its action for requests in flight (a list's last pages, a watch's events) to be accounted (1000)",
  scenario: `comma-separated, from ${SCENARIOS.join(", ")} (default: all)`,
  label: "results are written as <scenario>-<label>.json (default: latest, quick with --quick)",
  artifact: "dist (default: npm run build, then dist/main.mjs) or src (src/cli/main.ts, no build)",
} as const;

const positive = z.coerce.number().int().min(1);
const schema = z.object({
  replicas: positive.optional(),
  apps: positive.optional(),
  added: positive.optional(),
  secrets: positive.optional(),
  "value-bytes": positive.default(1024),
  "steady-seconds": positive.optional(),
  "referenced-writes": z.coerce.number().min(0).default(1),
  "unrelated-writes": z.coerce.number().min(0).default(20),
  "restart-down-ms": z.coerce.number().int().min(0).default(3_000),
  "throttle-seconds": positive.optional(),
  "throttle-share": z.coerce.number().min(0).max(1).default(0.5),
  "retry-after": positive.default(3),
  "converge-timeout": positive.optional(),
  "settle-ms": z.coerce.number().int().min(0).default(1_000),
  scenario: z
    .string()
    .default(SCENARIOS.join(","))
    .transform((s) => s.split(",").filter((x) => x !== ""))
    .pipe(z.array(z.enum(SCENARIOS))),
  label: z
    .string()
    .regex(/^[a-z0-9-]+$/, "lower-case letters, digits and -")
    .optional(),
  artifact: z.enum(["dist", "src"]).default("dist"),
  quick: z.boolean().default(false),
  report: z.boolean().default(false),
});

/** The usage text. */
export function usage(): string {
  const lines = Object.entries(FLAGS).map(([f, help]) => `  --${f.padEnd(18)} ${help}`);
  return [
    "npm run fleet -- [--quick] [--report] [flags]",
    "  --quick              12 replicas, 1k Apps, 5k Secrets, short windows (a few minutes)",
    "  --report             only render bench/results/fleet.md, the targets and the charts from the results",
    "  --help               this text",
    ...lines,
  ].join("\n");
}

/** Parses the flags; a message naming the bad one otherwise (the usage for `--help`). */
export function parseFleetArgs(argv: readonly string[]): FleetConfig | string {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(Object.keys(FLAGS).map((f) => [f, { type: "string" as const }])),
        quick: { type: "boolean" },
        report: { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return `${(e as Error).message}\n${usage()}`;
  }
  if (values.help === true) return usage();
  const { help: _, ...flags } = values;
  const parsed = schema.safeParse(flags);
  if (!parsed.success)
    return parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("\n");
  const v = parsed.data;
  const d = v.quick ? QUICK : FULL;
  const config: FleetConfig = {
    replicas: v.replicas ?? d.replicas,
    apps: v.apps ?? d.apps,
    added: v.added ?? d.added,
    secrets: v.secrets ?? d.secrets,
    valueBytes: v["value-bytes"],
    steadySeconds: v["steady-seconds"] ?? d.steadySeconds,
    referencedWritesPerSecond: v["referenced-writes"],
    unrelatedWritesPerSecond: v["unrelated-writes"],
    restartDownMs: v["restart-down-ms"],
    throttleSeconds: v["throttle-seconds"] ?? d.throttleSeconds,
    throttleShare: v["throttle-share"],
    retryAfterSeconds: v["retry-after"],
    convergeTimeoutSeconds: v["converge-timeout"] ?? d.convergeTimeoutSeconds,
    settleMs: v["settle-ms"],
    scenarios: SCENARIOS.filter((s) => v.scenario.includes(s)),
    label: v.label ?? (v.quick ? "quick" : "latest"),
    quick: v.quick,
    reportOnly: v.report,
    artifact: v.artifact,
  };
  if (config.secrets < config.apps + config.added + 1)
    return `--secrets: must be at least apps + added + 1 (${config.apps + config.added + 1})`;
  return config;
}
