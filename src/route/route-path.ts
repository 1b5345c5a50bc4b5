/** Whether a raw request target (origin or absolute form) names `/v1/route` or `/v1/route/*`. */
export function isRoutePath(url: string): boolean {
  const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1 || !url.startsWith("/v1/route", start)) return false;
  const next = url.charAt(start + "/v1/route".length);
  return next === "" || next === "/" || next === "?" || next === "#";
}

/**
 * The authority of an absolute-form target (`http://shop.example.com/v1/route`): what lies
 * between the first `//` and the path `isRoutePath` reads, "" when there is no `//`. It names
 * the host asked about in place of Host (RFC 9112 §3.2.2). Null for the origin form, the common
 * case, at the cost of one character's test.
 */
export function targetAuthority(url: string): string | null {
  if (url.charCodeAt(0) === 47 /* / */) return null;
  const slashes = url.indexOf("//");
  if (slashes === -1) return "";
  const from = slashes + 2;
  const path = url.indexOf("/", from);
  return url.slice(from, path === -1 ? url.length : path);
}
