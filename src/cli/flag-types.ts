// The value types of `serve`'s flags, as zod parses a flag's text (flags.ts names each flag's).

import * as z from "zod";

// The host is required: an empty one (`:8080`) reads as "every interface" to some and as
// "localhost" to others, so it is refused rather than guessed.
export const hostPort = z.string().transform((raw, ctx) => {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(raw);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65535) {
    ctx.issues.push({
      code: "custom",
      message: `expected HOST:PORT (port 0-65535), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  }
  if (m[2] === "") {
    ctx.issues.push({
      code: "custom",
      message: `expected HOST:PORT with a host (127.0.0.1 for loopback, 0.0.0.0 for every interface), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  }
  return { host: m[1] ?? m[2]!, port };
});

// A proxy's runtime interface: a Unix socket in the volume only the sidecar and the proxy mount
// (ADR 46). A TCP address is refused: every process of the pod, and any App whose upstream
// reaches it through the proxy, could write the table there.
export const unixSocket = (barePath: boolean) =>
  z.string().transform((raw, ctx) => {
    const path = raw.startsWith("unix:") ? raw.slice("unix:".length) : barePath ? raw : "";
    if (path.startsWith("/") && path.length > 1) return path;
    ctx.issues.push({
      code: "custom",
      message: `expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  });

export const bool = z
  .enum(["true", "false"], "must be true or false")
  .transform((v) => v === "true");
export const seconds = (max: number) =>
  z.coerce
    .number()
    .int("must be a whole number")
    .min(0, "must be at least 0")
    .max(max, `must be at most ${max}`);

export const nonEmpty = z.string().min(1, "must not be empty");

/** A whole number from `min` to `max`. */
export const count = (min: number, max?: number) => {
  const atLeast = z.coerce
    .number()
    .int("must be a whole number")
    .min(min, `must be at least ${min}`);
  return max === undefined ? atLeast : atLeast.max(max, `must be at most ${max}`);
};
