/**
 * The demo's sample data: a Registry with two Apps, one of whose App Secrets is deliberately
 * missing.
 */
import type { Envtest } from "./envtest.ts";

/**
 * The Registry document the demo serves: `shop` resolves, `blog` points at a Secret that does not
 * exist.
 */
export const DEMO_REGISTRY = {
  apiVersion: "replica-mirror/v1",
  apps: [
    {
      name: "shop",
      hostnames: ["shop.example.com", "*.shop.example.com"],
      secretRef: { namespace: "tenant-a", name: "shop-credentials", key: "token" },
      upstream: "http://shop.tenant-a.svc.cluster.local:8080",
    },
    {
      name: "blog",
      hostnames: ["blog.example.com"],
      secretRef: { namespace: "tenant-b", name: "blog-credentials", key: "token" },
      upstream: "http://blog.tenant-b.svc.cluster.local:8080",
    },
  ],
};

/** The token stored in tenant-a/shop-credentials. */
export const DEMO_SHOP_TOKEN = "shop-demo-token";

/**
 * Writes `default/replica-registry` (key `registry.json`) and `tenant-a/shop-credentials` (key
 * `token`), and no `tenant-b/blog-credentials`, so the demo shows a 503 for blog.example.com.
 */
export function seedDemo(envtest: Envtest): void {
  envtest.apply({
    namespace: "default",
    name: "replica-registry",
    data: { "registry.json": JSON.stringify(DEMO_REGISTRY) },
  });
  envtest.apply({
    namespace: "tenant-a",
    name: "shop-credentials",
    data: { token: DEMO_SHOP_TOKEN },
  });
}
