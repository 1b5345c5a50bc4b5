/** What every request handler is given. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FeatureGates } from "./feature-gates.ts";
import type { Query } from "./http-io.ts";
import type { RequestRecord } from "./request-log.ts";
import type { EnvtestState } from "./store.ts";
import type { WatchHub } from "./watch-hub.ts";

/** One request as the handlers see it; the state and hub are the server's, shared by all. */
export interface Ctx {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly query: Query;
  readonly state: EnvtestState;
  readonly hub: WatchHub;
  /** Where a handler reports what it served: list items, how a list was read, watch events. */
  readonly record: RequestRecord;
  /** host:port as clients reach the server, for discovery's serverAddressByClientCIDRs. */
  readonly serverAddress: string;
  /** The feature gates as the request arrived. */
  readonly featureGates: FeatureGates;
}
