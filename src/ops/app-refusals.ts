// Which Apps a published Snapshot newly refuses something, for the log: one line per App when it
// enters a credential refusal, `credentials-off` or `secret-unusable` (ADR 53), or when its TLS
// Secret's certificate is refused or `--serve-certificates` is off (ADR 56); none per publish
// while it stays there. Pure.

import { CERTIFICATE_RULES, type CertificateRule } from "../snapshot/certificate.ts";
import { forChangedChunks } from "../snapshot/chunk-changes.ts";
import { UNUSABLE_RULES } from "../snapshot/credential.ts";
import { findApp } from "../snapshot/lookup.ts";
import type { App, Snapshot } from "../snapshot/types.ts";

/** An App that entered a refusal: its name and what the log line says of it. */
export type AppRefusal =
  | { readonly app: string; readonly state: "credentials-off" }
  | {
      readonly app: string;
      readonly state: "secret-unusable";
      readonly reason: keyof typeof UNUSABLE_RULES;
      readonly rule: string;
    }
  | { readonly app: string; readonly state: "certificates-off" }
  | {
      readonly app: string;
      readonly state: "certificate-refused";
      readonly reason: CertificateRule;
      readonly rule: string;
      /** For `hostname-not-covered`: the first hostname the certificate leaves out. */
      readonly hostname: string | null;
      /** Whether the App's last good certificate is still served. */
      readonly lastGoodKept: boolean;
    };

/**
 * The refusals of `next`'s Apps that `previous` (null: none published) did not have for the same
 * reason (a certificate: for the same Secret version), in slot order. Costs a look at the chunks
 * a Secret-only rebuild replaced when the Registry did not change (it shares every untouched
 * chunk); a lookup by name per refused App when it did.
 */
export function enteredRefusals(previous: Snapshot | null, next: Snapshot): AppRefusal[] {
  const entered: AppRefusal[] = [];
  const sameRoutes = previous !== null && previous.routes === next.routes;
  const visit = (c: number) => {
    const chunk = next.apps.chunks[c]!;
    const before = sameRoutes ? previous.apps.chunks[c] : undefined;
    chunk.forEach((app, i) => {
      const credential = credentialRefusal(app);
      const certificate = certificateRefusal(app);
      if (credential === null && certificate === null) return;
      const was =
        before !== undefined
          ? before[i]
          : previous === null
            ? undefined
            : findApp(previous, app.name);
      if (credential !== null && was?.reason !== app.reason) entered.push(credential);
      if (certificate !== null && !sameCertificateRefusal(was, app)) entered.push(certificate);
    });
  };
  if (sameRoutes) forChangedChunks(previous.apps.chunks, next.apps.chunks, visit);
  else for (let c = 0; c < next.apps.chunks.length; c++) visit(c);
  return entered;
}

function credentialRefusal(app: App): AppRefusal | null {
  const { name, reason } = app;
  if (reason === "credentials-off") return { app: name, state: "credentials-off" };
  if (reason === "value-too-long" || reason === "value-not-a-header")
    return { app: name, state: "secret-unusable", reason, rule: UNUSABLE_RULES[reason] };
  return null;
}

function certificateRefusal(app: App): AppRefusal | null {
  const certificate = app.certificate;
  if (certificate?.state === "off") return { app: app.name, state: "certificates-off" };
  const refusal = certificate?.refusal;
  if (refusal == null) return null;
  return {
    app: app.name,
    state: "certificate-refused",
    reason: refusal.rule,
    rule: CERTIFICATE_RULES[refusal.rule],
    hostname: refusal.hostname ?? null,
    lastGoodKept: certificate!.served !== null,
  };
}

function sameCertificateRefusal(was: App | undefined, app: App): boolean {
  const a = was?.certificate;
  const b = app.certificate;
  if (a == null || b == null) return false;
  return (
    a.state === b.state &&
    a.refusal?.rule === b.refusal?.rule &&
    a.resourceVersion === b.resourceVersion
  );
}
