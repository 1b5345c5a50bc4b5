// What every suite is given and gives back.

import type { Row } from "./measure.ts";

/** How the run was asked for, and how the shipped artifact and baselines are started. */
export interface SuiteContext {
  readonly quick: boolean;
  /** `--apps=100000,...`: the sizes the sized suites (start-up, memory, warm start) run at instead of their own. */
  readonly apps?: readonly number[];
  /** `--value-bytes=40,1024`: the App Secret value sizes the memory suite runs at; default 1 KiB (and 40 B at 100k in a full run). */
  readonly valueBytes?: readonly number[];
  /** The image's V8 flags (ENTRYPOINT and NODE_OPTIONS), used for baselines too. */
  readonly nodeFlags: readonly string[];
  /** Environment for every measured process: the image's ENV. */
  readonly env: Readonly<Record<string, string>>;
}

/** A suite's table rows and its raw data (saved as JSON for the charts). */
export interface SuiteOutput {
  readonly rows: Row[];
  readonly data: unknown;
}

export type Suite = (ctx: SuiteContext) => SuiteOutput | Promise<SuiteOutput>;
