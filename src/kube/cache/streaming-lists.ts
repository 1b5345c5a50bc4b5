// What a process knows about its API server's streaming lists (WatchList, KEP-3157): a reflector
// starts with one until the server refuses it, and from then on every reflector of the process
// lists instead. One server answers them all, and asking again on every relist would cost each
// reflector a refused request and its log line for nothing.

import type { ApiError } from "./list-watch.ts";

/**
 * Whether the API server serves streaming lists, as this process learnt it: yes until one
 * refusal, and no for good after it. A server's feature gates change only when it restarts; a
 * process learns the new ones when it starts itself (the next rollout).
 */
export class StreamingLists {
  #refusal: ApiError | undefined;
  #available: boolean;

  /** `available: false` stands for a server already known to refuse them. */
  constructor(available = true) {
    this.#available = available;
  }

  /** True until a refusal was recorded. */
  get available(): boolean {
    return this.#available;
  }

  /** The refusal that ended them, if one did (the first of several racing reflectors). */
  get refusal(): ApiError | undefined {
    return this.#refusal;
  }

  /** Records that the server refused one; true the first time only, so it is reported once. */
  refuse(error: ApiError): boolean {
    if (!this.#available) return false;
    this.#available = false;
    this.#refusal = error;
    return true;
  }
}

/**
 * How an API server refuses a streaming list: 422 Invalid while the WatchList feature gate is
 * off ("sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"),
 * 400 from a server older than the parameter. Neither is a failure worth a retry.
 */
export function refusesStreamingList(error: ApiError): boolean {
  return error.kind === "http" && (error.status === 422 || error.status === 400);
}

/** The one every reflector of this process shares unless it is given its own. */
export const processStreamingLists = new StreamingLists();
