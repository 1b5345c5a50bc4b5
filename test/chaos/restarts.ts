/**
 * What the judge knows of sidecars restarted since they last converged: how far back the states
 * each may serve reach, and whether it kept a last good Registry through the restart.
 */
import type { History } from "./history.ts";

/** What a restarted sidecar's state file held: its Registry's and App Secrets' versions. */
export interface SavedInputs {
  readonly registryRv: string | null;
  /** It keeps a Registry beside its refused value (ADR 91). */
  readonly keptRegistry: boolean;
  readonly secrets: readonly { namespace: string; name: string; rv: string }[];
}

export class Restarts {
  readonly #history: History;
  /** Where each restarted sidecar's states may start. */
  readonly #from = new Map<string, number>();
  /** Restarted sidecars with no Registry kept from before their first value. */
  readonly #forgot = new Set<string>();

  constructor(history: History) {
    this.#history = history;
  }

  /** Where a sidecar's states start, the window starting at `windowStart`. */
  startFor(name: string, windowStart: number): number {
    return Math.min(windowStart, this.#from.get(name) ?? Number.POSITIVE_INFINITY);
  }

  /** `Viewer.forgotLastGood`. */
  forgotLastGood(name: string): boolean {
    return this.#forgot.has(name);
  }

  /**
   * A restarted sidecar's state file holds `saved`: it serves those inputs first, which may be
   * older than what it served before (a crash leaves the last write; a write waits up to 5 s
   * after a change, and only for whole inputs), and whose watches lagged each other as any
   * replica's. Until it converges, its states start at the earliest that wrote one of them.
   * Null: nothing usable, it starts cold. Either way without a Registry kept beside a refused
   * value, it has no last good one. Says what the file holds that no state wrote, if anything.
   */
  saved(name: string, saved: SavedInputs | null): string | null {
    if (saved === null) {
      this.#forgot.add(name);
      return null;
    }
    const h = this.#history;
    const registryAt = h.registryWrittenAt(saved.registryRv);
    const written = [
      [`the Registry at ${saved.registryRv}`, registryAt] as const,
      ...saved.secrets.map(
        (x) =>
          [
            `${x.namespace}/${x.name} at ${x.rv}`,
            h.secretWrittenAt(x.namespace, x.name, x.rv),
          ] as const,
      ),
    ];
    const unknown = written.filter(([, at]) => at === undefined).map(([what]) => what);
    if (unknown.length > 0)
      return `its state file holds what no state wrote: ${unknown.join(", ")}`;
    const kind = h.states[registryAt!]!.registry.kind;
    if ((kind === "bad" || kind === "partial") && !saved.keptRegistry) this.#forgot.add(name);
    const from = Math.min(...written.map(([, at]) => at!));
    this.#from.set(name, Math.min(from, this.#from.get(name) ?? from));
    return null;
  }

  /** The sidecar converged at a quiescent point: its window is the judge's again. */
  converged(name: string): void {
    this.#from.delete(name);
    this.#forgot.delete(name);
  }
}
