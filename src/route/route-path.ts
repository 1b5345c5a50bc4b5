/** Whether a raw request target (origin or absolute form) names `/v1/route` or `/v1/route/*`. */
export function isRoutePath(url: string): boolean {
  const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1 || !url.startsWith("/v1/route", start)) return false;
  const next = url.charAt(start + "/v1/route".length);
  return next === "" || next === "/" || next === "?" || next === "#";
}
