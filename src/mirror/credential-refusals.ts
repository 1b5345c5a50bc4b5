// Which Apps a published Snapshot newly refuses over their credential, for the log: one line per
// App when it enters `credentials-off` or `secret-unusable` (or breaks another rule than
// before), none per publish while it stays there (ADR 53). Pure.

import { UNUSABLE_RULES } from "../snapshot/credential.ts";
import { findApp } from "../snapshot/lookup.ts";
import type { App, Snapshot } from "../snapshot/types.ts";

/** An App that entered a credential refusal: its name and what the log line says of it. */
export type CredentialRefusal =
  | { readonly app: string; readonly state: "credentials-off" }
  | {
      readonly app: string;
      readonly state: "secret-unusable";
      readonly reason: keyof typeof UNUSABLE_RULES;
      readonly rule: string;
    };

/**
 * The Apps of `next` refused over their credential that `previous` (null: none published) did
 * not refuse for the same reason, in slot order. Costs a comparison of chunk references when the
 * Registry did not change (a Secret-only rebuild shares every untouched chunk); a lookup by name
 * per refused App when it did.
 */
export function enteredCredentialRefusals(
  previous: Snapshot | null,
  next: Snapshot,
): CredentialRefusal[] {
  const entered: CredentialRefusal[] = [];
  const sameRoutes = previous !== null && previous.routes === next.routes;
  next.apps.chunks.forEach((chunk, c) => {
    const before = sameRoutes ? previous.apps.chunks[c] : undefined;
    if (before === chunk) return;
    chunk.forEach((app, i) => {
      const refusal = refusalOf(app);
      if (refusal === null) return;
      const was =
        before !== undefined
          ? before[i]
          : previous === null
            ? undefined
            : findApp(previous, app.name);
      if (was?.reason !== app.reason) entered.push(refusal);
    });
  });
  return entered;
}

function refusalOf(app: App): CredentialRefusal | null {
  const { name, reason } = app;
  if (reason === "credentials-off") return { app: name, state: "credentials-off" };
  if (reason === "value-too-long" || reason === "value-not-a-header")
    return { app: name, state: "secret-unusable", reason, rule: UNUSABLE_RULES[reason] };
  return null;
}
