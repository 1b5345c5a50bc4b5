/**
 * The kube-apiserver feature gates envtest models (`--feature-gates`), so a client can be tried
 * against a server with a feature and against one without it.
 */

/** The gates, each on or off. */
export interface FeatureGates {
  /**
   * Streaming lists: a watch with `sendInitialEvents=true`. On (the default, as kube-apiserver has
   * it from 1.34), the watch sends the initial state first; off, it is refused with 422 Invalid
   * ("sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled").
   */
  readonly WatchList: boolean;
}

export const DEFAULT_FEATURE_GATES: FeatureGates = { WatchList: true };

/** The gates a server runs with; requests read them as they arrive. */
export class FeatureGateSettings {
  #gates: FeatureGates;

  constructor(initial: Partial<FeatureGates> = {}) {
    this.#gates = { ...DEFAULT_FEATURE_GATES, ...initial };
  }

  /** The gates now; a value that later changes do not alter. */
  get current(): FeatureGates {
    return this.#gates;
  }

  /**
   * Changes the named gates for requests from now on, as restarting the server with other
   * `--feature-gates` would, without the restart: open watches go on. Returns the gates now.
   */
  set(gates: Partial<FeatureGates>): FeatureGates {
    this.#gates = { ...this.#gates, ...gates };
    return this.#gates;
  }
}

/**
 * Parses `--feature-gates` as kube-apiserver writes it (`WatchList=false,Other=true`); a message
 * naming the bad entry otherwise. Unknown gates are refused: envtest would silently not model them.
 */
export function parseFeatureGates(text: string): Partial<FeatureGates> | string {
  const gates: { WatchList?: boolean } = {};
  for (const entry of text.split(",").filter((e) => e.trim() !== "")) {
    const [name, value, ...rest] = entry.trim().split("=");
    if (name !== "WatchList" || rest.length > 0 || (value !== "true" && value !== "false"))
      return `--feature-gates: expected WatchList=true|false, got '${entry.trim()}'`;
    gates[name] = value === "true";
  }
  return gates;
}
