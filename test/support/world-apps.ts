// The world the fuzz and hygiene suites serve: four Apps in the tests' Registry (a routed one
// with an upstream, one whose Secret is missing, a wildcard with a non-ASCII upstream and an IDN
// one), their Secrets holding recognisable markers that no answer may ever contain.

import type { Envtest } from "@replica-mirror/envtest";
import { APP_NS, type AppInput, writeRegistry, writeSecret } from "./world.ts";

/** An App of the world (its Secret in APP_NS); `ready` says whether its Secret exists. */
export interface WorldApp extends AppInput {
  readonly secret: string;
  readonly namespace: typeof APP_NS;
  readonly ready: boolean;
}

/** Markers stored as Secret values: no answer may contain them, raw or base64. */
export const SECRET_VALUES = {
  shop: "S3CR3T-shop-q7Vx2mKp9LwZ",
  wild: "S3CR3T-wild-Hn4Rt8YcB1sJ",
  idn: "S3CR3T-idn-Ue6Gd0FaXo3N",
} as const;

/** The Apps, in the order the Registry document lists them. */
export const WORLD_APPS: readonly WorldApp[] = [
  {
    name: "shop",
    hostnames: ["shop.example.com", "*.shop.example.com"],
    secret: "shop-credentials",
    namespace: APP_NS,
    upstream: "http://shop.tenant-a.svc.cluster.local:8080",
    ready: true,
  },
  {
    name: "blog",
    hostnames: ["blog.example.com"],
    secret: "blog-credentials",
    namespace: APP_NS,
    ready: false,
  },
  {
    name: "wild",
    hostnames: ["*.apps.example.net"],
    secret: "wild-credentials",
    namespace: APP_NS,
    // Not visible ASCII: the header carries it percent-encoded.
    upstream: "http://wild.svc/ä b",
    ready: true,
  },
  {
    name: "idn",
    hostnames: ["bücher.example"],
    secret: "idn-credentials",
    namespace: APP_NS,
    ready: true,
  },
];

/** Every form of the markers that must never leave the sidecar. */
export const FORBIDDEN: readonly string[] = Object.values(SECRET_VALUES).flatMap((v) => [
  v,
  Buffer.from(v).toString("base64"),
]);

/** Writes the world: every App of WORLD_APPS, with the Secrets of the ready ones. */
export function seedWorld(envtest: Envtest): void {
  for (const a of WORLD_APPS) {
    if (!a.ready) continue;
    writeSecret(envtest, APP_NS, a.secret, {
      token: SECRET_VALUES[a.name as keyof typeof SECRET_VALUES],
    });
  }
  writeRegistry(envtest, WORLD_APPS);
}
