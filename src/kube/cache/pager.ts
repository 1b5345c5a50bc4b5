// client-go's tools/pager for the reflector's lists: every page of one list, and the one restart
// a busy cluster needs.

import type { Result } from "../../result.ts";
import type { ApiError, ListOptions, ListPage, SecretObject } from "./list-watch.ts";
import type { ReflectorStatus } from "./reflector-status.ts";
import { isGone } from "./restart-policy.ts";

/** One list request: the options of one page, each item handed on as it arrives. */
export type ListPageRequest = (
  options: Omit<ListOptions, "signal" | "onActivity">,
  onItem: (item: SecretObject) => void,
) => Promise<Result<ListPage, ApiError>>;

/** A whole list: the resourceVersion all its pages share, and how many there were. */
export interface Listed {
  readonly resourceVersion: string;
  readonly pages: number;
}

/**
 * Lists every page at `resourceVersion` ("": the latest state, a consistent read that pages by
 * `pageSize`; any other value is served whole by the watch cache, whatever the limit). When a
 * continue token outlives compaction (410), starts over in one unpaged request, as client-go's
 * pager does, so a busy cluster cannot expire every attempt: `restarted` is told first, so the
 * caller forgets what the pages before delivered.
 */
export async function listAllPages(
  request: ListPageRequest,
  resourceVersion: string,
  pageSize: number,
  onItem: (item: SecretObject) => void,
  report: (status: ReflectorStatus) => void,
  restarted: () => void,
): Promise<Result<Listed, ApiError>> {
  let limit: number | undefined = resourceVersion === "" ? pageSize : undefined;
  let token: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await request(
      {
        ...(resourceVersion === "" || token !== undefined ? {} : { resourceVersion }),
        ...(limit === undefined ? {} : { limit }),
        ...(token === undefined ? {} : { continue: token }),
      },
      onItem,
    );
    if (!page.ok) {
      if (token === undefined || !isGone(page.error)) return page;
      report({ kind: "relist", reason: "continue-expired" });
      token = undefined;
      limit = undefined;
      pages = 0;
      restarted();
      continue;
    }
    pages += 1;
    if (page.value.continue === undefined)
      return { ok: true, value: { resourceVersion: page.value.resourceVersion, pages } };
    token = page.value.continue;
  }
}
