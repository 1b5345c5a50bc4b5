// Sorted table keys cut into groups that a Caddy `header` matcher tells apart with a few values:
// each group is a run of whole subtrees of the keys' character trie, so `prefix*` (or a lone key)
// matches exactly that group's keys among all the keys. A request whose Host is known to be one
// of the keys then needs one short matcher per group tried, and no list of names.

/** One group: what its `header` matcher holds, and its keys. */
export interface PrefixGroup {
  /** `prefix*` for a subtree of several keys, the key itself for one. */
  readonly patterns: readonly string[];
  /** The group's keys, in the order given. */
  readonly keys: readonly string[];
}

/**
 * Groups of at most `limit` keys (at least 1) and at most `maxPatterns` patterns each, in key
 * order. `keys` must be sorted (code-unit order) and unique.
 */
export function partitionByPrefix(
  keys: readonly string[],
  limit: number,
  maxPatterns: number,
): PrefixGroup[] {
  const groups: PrefixGroup[] = [];
  let patterns: string[] = [];
  let from = 0;
  let to = 0;
  const add = (pattern: string, end: number) => {
    if (to > from && (end - from > limit || patterns.length === maxPatterns)) {
      groups.push({ patterns, keys: keys.slice(from, to) });
      patterns = [];
      from = to;
    }
    patterns.push(pattern);
    to = end;
  };
  // keys[lo..hi) are every key that starts with their common prefix.
  const visit = (lo: number, hi: number): void => {
    const depth = commonPrefix(keys[lo]!, keys[hi - 1]!);
    if (hi - lo === 1) {
      add(keys[lo]!, hi);
      return;
    }
    if (hi - lo <= limit) {
      add(`${keys[lo]!.slice(0, depth)}*`, hi);
      return;
    }
    let at = lo;
    // Sorted first, a key that is the prefix itself has no character to split on.
    if (keys[at]!.length === depth) {
      add(keys[at]!, at + 1);
      at++;
    }
    while (at < hi) {
      const c = keys[at]!.charCodeAt(depth);
      let end = at + 1;
      while (end < hi && keys[end]!.charCodeAt(depth) === c) end++;
      visit(at, end);
      at = end;
    }
  };
  if (keys.length > 0) visit(0, keys.length);
  if (to > from) groups.push({ patterns, keys: keys.slice(from, to) });
  return groups;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
