/**
 * Orders two resourceVersions when both are decimal integers (etcd revisions, as every
 * Kubernetes API server and envtest issue them); otherwise they are only known to differ.
 * Returns <0, 0 or >0 like a comparator, or null when no order is known.
 */
export function compareResourceVersions(a: string, b: string): number | null {
  if (a === b) return 0;
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return null;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : 1;
}
