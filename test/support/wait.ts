// The one way tests wait for something. Outside vitest (the chaos command) there is no
// `vi.waitFor`, so this is a plain function both can use.

/**
 * Calls `check` every `intervalMs` until it returns something other than undefined (or false),
 * and resolves to that; a throw counts as "not yet". Rejects after `timeoutMs` naming `what`
 * and the last error.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? "" : ` (last error: ${String(lastError)})`;
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${options.what ?? "a condition"}${why}`,
      );
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 10));
  }
}

/** REPLICA_MIRROR_LONG=1 selects the full-size fuzz and hygiene runs. */
export const LONG = process.env.REPLICA_MIRROR_LONG === "1";

/** `long` when REPLICA_MIRROR_LONG=1, else `short`. */
export const size = (short: number, long: number): number => (LONG ? long : short);
