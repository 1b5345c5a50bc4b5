// Where a state stands among the writes of its pod, and where the pod's writes go on. Pure: the
// state file's and the mark's contents are the caller's.

import type { Mark } from "./mark.ts";
import type { Generation } from "./state.ts";

/** How a state that opened stands against the newest write its pod's mark records. */
export type Standing =
  /** No mark to compare with (a new pod, or the mark lost or unusable): nothing can be told. */
  | { readonly kind: "unknown" }
  /** The newest this pod wrote, or newer than the mark (the pod died between the two writes). */
  | { readonly kind: "newest" }
  /** Of the mark's series but fewer writes: an older copy put back over the newest. */
  | { readonly kind: "older"; readonly newest: Mark }
  /** Of another series: a copy from another volume (another replica's, a backup of a past pod). */
  | { readonly kind: "other-series"; readonly newest: Mark };

/** How a state of `generation` stands against `mark` (null: none could be read). */
export function standing(generation: Generation, mark: Mark | null): Standing {
  if (mark === null) return { kind: "unknown" };
  if (generation.series !== mark.series) return { kind: "other-series", newest: mark };
  return generation.writes < mark.writes ? { kind: "older", newest: mark } : { kind: "newest" };
}

/**
 * The generation the pod's next write follows: the mark's series, past both the mark's writes
 * and the served state's (when of that series); without a mark, the served state's; without
 * either, a new series with no write yet. `heardAt` is the served state's: its inputs are what
 * was last heard until the API server is heard from again.
 */
export function continueFrom(
  served: Generation | null,
  mark: Mark | null,
  newSeries: () => string,
): Generation {
  const heardAt = served?.heardAt ?? null;
  if (mark !== null) {
    const own = served !== null && served.series === mark.series ? served.writes : 0;
    return { series: mark.series, writes: Math.max(mark.writes, own), heardAt };
  }
  return served ?? { series: newSeries(), writes: 0, heardAt: null };
}
