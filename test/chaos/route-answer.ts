// What `/v1/route` must answer, as the routing contract (README) fixes it, for a probe of the
// checks: the matched App's state from the model (model.ts), reduced to a comparable key.
import { type AppState, matchHost, refusal, type ServedApp } from "./model.ts";

/** A host the checks ask about. `host` null: the spec's "missing or unparsable host" (400). */
export interface Probe {
  /** What the request sends, before the random variants (case, trailing dot, port). */
  readonly raw: string;
  /** The normalised name, or null for a bad host. */
  readonly host: string | null;
}

/** A `/v1/route` answer reduced to what the contract fixes (no revision, no retry-after). */
export type RouteAnswer =
  | {
      readonly status: 200;
      readonly app: string;
      readonly upstream: string | null;
      /** `x-mirror-credential`: test values, never a real Secret's. */
      readonly credential: string | null;
    }
  | {
      readonly status: 503;
      readonly reason: "secret-unavailable" | "secret-unusable" | "credentials-off";
      readonly app: string;
    }
  | { readonly status: 404 }
  | { readonly status: 400 }
  | { readonly status: number; readonly other: string };

/** A comparable one-line form of an answer. */
export function answerKey(a: RouteAnswer): string {
  if ("other" in a) return `${a.status} ${a.other}`;
  if (a.status === 200 && "app" in a && "upstream" in a)
    return `200 ${a.app} ${a.upstream ?? "-"} ${a.credential ?? "-"}`;
  if (a.status === 503 && "reason" in a) return `503 ${a.reason} ${a.app}`;
  return String(a.status);
}

/** What `/v1/route` must answer for `probe` given served Apps and the matched App's state. */
export function routeAnswer(
  apps: readonly ServedApp[],
  probe: Probe,
  stateOf: (app: ServedApp) => Pick<AppState, "reason" | "credential">,
): RouteAnswer {
  if (probe.host === null) return { status: 400 };
  const app = matchHost(apps, probe.host);
  if (app === undefined) return { status: 404 };
  const { reason, credential } = stateOf(app);
  if (reason === null) return { status: 200, app: app.name, upstream: app.upstream, credential };
  return { status: 503, reason: refusal(reason), app: app.name };
}
