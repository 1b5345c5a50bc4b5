// The fixed world of the zero-hop contract suite: wildcards at two depths and at the deepest a
// name allows, a conflict, a missing Secret, an App without an http upstream.

import type { AppInput } from "../support/world.ts";

// Larger than every proxy's in-memory body buffer, and not text.
export const BODY = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 31 + 7) % 256);

/** The contract's world: wildcards at two depths, a conflict, a missing Secret, no upstream. */
export function contractWorld(urls: readonly string[]): AppInput[] {
  return [
    { name: "alpha", hostnames: ["both.example.com"], upstream: urls[0]! },
    { name: "bare", hostnames: ["bare.example.com"] },
    { name: "beta", hostnames: ["both.example.com", "beta.example.com"], upstream: urls[1]! },
    { name: "blog", hostnames: ["blog.example.com"], upstream: urls[0]! },
    { name: "deep", hostnames: ["*.a.example.com"], upstream: urls[1]! },
    { name: "last", hostnames: ["*.z.z"], upstream: urls[0]! },
    { name: "shop", hostnames: ["shop.example.com", "*.shop.example.com"], upstream: urls[0]! },
    { name: "wide", hostnames: ["*.example.com"], upstream: `${urls[1]!}/` },
  ];
}

export const READY = ["alpha", "bare", "beta", "deep", "last", "shop", "wide"];
export const secretsFor = (names: readonly string[]) =>
  Object.fromEntries(names.map((n) => [`${n}-credentials`, { token: "t" }]));
