/** What every request handler is given. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultSettings } from "./faults.ts";
import type { EnvtestState } from "./store.ts";
import type { WatchHub } from "./watch-hub.ts";

/**
 * One request as the handlers see it; the state, hub and switches are the server's, shared by all
 * requests.
 */
export interface Ctx {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly query: Readonly<Record<string, string>>;
  readonly state: EnvtestState;
  readonly hub: WatchHub;
  readonly settings: FaultSettings;
  /** host:port as clients reach the server, for discovery's serverAddressByClientCIDRs. */
  readonly serverAddress: string;
}
