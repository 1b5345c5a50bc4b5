/** The hostname patterns the generator declares, as written (the model normalises the IDN ones). */

/** Exact names. */
export const EXACT: readonly string[] = [
  "shop.example.com",
  "blog.example.com",
  "api.example.com",
  "example.com",
  "x.shop.example.com",
  "a.b.example.com",
  "www.other.test",
  "bücher.example",
];

/** Wildcards. */
export const WILDCARDS: readonly string[] = [
  "*.example.com",
  "*.shop.example.com",
  "*.b.example.com",
  "*.other.test",
  "*.x.shop.example.com",
  "*.bücher.example",
];
