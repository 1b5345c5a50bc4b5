// Bounds on wall-clock waits that a busy two-core machine stretches (the suite's two workers,
// proxies, sidecars and whatever else shares the cores). Each is several times what its
// mechanism takes on a quiet machine and still short of what the mechanism's absence would take,
// so a test keeps failing on what it is about.

/**
 * A change, or a restarted proxy's whole table, reaches the proxy in one push: tens of ms quiet,
 * a few hundred after a restart (the pusher's revision check runs every 250 ms). Without that
 * push it would come only with the verification, every 5 s (ADR 51), or never.
 */
export const PUSHED_WITHIN_MS = 3_000;
