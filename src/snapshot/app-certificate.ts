// An App's certificate as a Snapshot holds it (ADR 56): the TLS Secret's, checked; or, when the
// Secret's is refused, the App's last good one, never another App's. Pure.

import type { AppSpec } from "../registry/schema.ts";
import {
  type CertificateRefusal,
  checkCertificate,
  type ServedCertificate,
  TLS_CERT_KEY,
  TLS_KEY_KEY,
} from "./certificate.ts";
import { readSecret } from "./read-secret.ts";
import type { AppCertificate, CertificateBefore, KeptCertificate, SecretLookup } from "./types.ts";

const OFF: AppCertificate = Object.freeze({
  state: "off",
  served: null,
  refusal: null,
  resourceVersion: null,
});

/**
 * The certificate of `spec` (null: it declares no `tls`) at `now`, given what the same App held
 * in the Snapshot before (`previous`). A served certificate of the same Secret version and
 * hostnames is kept as it is: a Secret is checked once per version, not once per rebuild; a
 * refusal is checked again at every rebuild of the App. The last good certificate survives a
 * refusal only while the App's hostnames are those it was checked for, and only until it expires.
 */
export function resolveCertificate(
  spec: AppSpec,
  secrets: SecretLookup,
  serveCertificates: boolean,
  now: number,
  previous: CertificateBefore | undefined,
): AppCertificate | null {
  if (spec.tls === null) return null;
  if (!serveCertificates) return OFF;
  const { namespace, name } = spec.tls.secretRef;
  const secret = readSecret(secrets, namespace, name, [TLS_CERT_KEY, TLS_KEY_KEY], true);
  const resourceVersion = secret?.resourceVersion ?? null;
  const before = previous !== undefined && sameTls(previous, spec) ? previous.certificate : null;
  if (before?.state === "served" && before.resourceVersion === resourceVersion) return before;
  const lastGood = before?.served ?? null;
  const refused = (refusal: CertificateRefusal): AppCertificate =>
    Object.freeze({
      state: "refused",
      served: lastGood !== null && lastGood.notAfter >= now ? lastGood : null,
      refusal: Object.freeze(refusal),
      resourceVersion,
    });
  if (secret === undefined) return refused({ rule: "secret-absent" });
  const chain = own(secret.data, TLS_CERT_KEY);
  const key = own(secret.data, TLS_KEY_KEY);
  if (chain === undefined || key === undefined) return refused({ rule: "key-missing" });
  const checked = checkCertificate(chain, key, spec.hostnames, now, secret.resourceVersion);
  if (!checked.ok) return refused(checked.error);
  const served: ServedCertificate = checked.value;
  return Object.freeze({ state: "served", served, refusal: null, resourceVersion });
}

/** The same hostnames and the same TLS Secret: what a certificate was checked against. */
function sameTls(previous: CertificateBefore, spec: AppSpec): boolean {
  const a = previous.hostnames;
  const b = spec.hostnames;
  if (a !== b && (a.length !== b.length || a.some((h, i) => h !== b[i]))) return false;
  const was = previous.tls?.secretRef;
  const is = spec.tls?.secretRef;
  return (
    was !== undefined && is !== undefined && was.namespace === is.namespace && was.name === is.name
  );
}

// Own keys only: a Secret lacking a key must not read Object.prototype's.
const own = (data: Readonly<Record<string, string>>, key: string) =>
  Object.hasOwn(data, key) ? data[key] : undefined;

/** A kept certificate as the App before it held it: refused, its last good one served. */
export function keptBefore(kept: KeptCertificate): CertificateBefore {
  return {
    hostnames: kept.hostnames,
    tls: { secretRef: kept.secretRef },
    certificate: { state: "refused", served: kept.served, refusal: null, resourceVersion: null },
  };
}

/** The App's last good certificate where its Secret's is refused, to keep (ADR 92); else null. */
export function keptOf(app: CertificateBefore & { readonly name: string }): KeptCertificate | null {
  const { certificate, tls } = app;
  if (certificate?.state !== "refused" || certificate.served === null || tls === null) return null;
  return {
    app: app.name,
    hostnames: app.hostnames,
    secretRef: tls.secretRef,
    served: certificate.served,
  };
}
