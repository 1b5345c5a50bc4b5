// The last good certificates a state keeps beside refused ones (ADR 92): one object each, in the
// skeleton (a few Apps at most, not columns). The chain and key are Secret bytes, PEM text as the
// check re-encoded them; the whole skeleton is sealed with the rest of the state.

import * as z from "zod";
import type { KeptCertificate } from "../snapshot/types.ts";

const name = z.string().min(1);

/** No transforms: zod compiles it into one function. */
export const keptCertificatesSchema = z.array(
  z.object({
    app: name,
    hostnames: z.array(name).min(1),
    namespace: name,
    name,
    chain: name,
    key: name,
    id: z.string().regex(/^[0-9a-f]{16}$/),
    serial: name,
    notBefore: z.number().int(),
    notAfter: z.number().int(),
    resourceVersion: name,
  }),
);

export type KeptCertificatesSkeleton = z.infer<typeof keptCertificatesSchema>;

/** The skeleton's entries of `kept`. */
export function toKeptCertificates(kept: readonly KeptCertificate[]): KeptCertificatesSkeleton {
  return kept.map(({ app, hostnames, secretRef, served }) => ({
    app,
    hostnames: [...hostnames],
    namespace: secretRef.namespace,
    name: secretRef.name,
    chain: served.chain,
    key: served.key,
    id: served.id,
    serial: served.serial,
    notBefore: served.notBefore,
    notAfter: served.notAfter,
    resourceVersion: served.resourceVersion,
  }));
}

/** The kept certificates the skeleton's entries stand for, frozen as a Snapshot holds them. */
export function fromKeptCertificates(entries: KeptCertificatesSkeleton): KeptCertificate[] {
  return entries.map((e) =>
    Object.freeze({
      app: e.app,
      hostnames: Object.freeze([...e.hostnames]),
      secretRef: Object.freeze({ namespace: e.namespace, name: e.name }),
      served: Object.freeze({
        chain: e.chain,
        key: e.key,
        id: e.id,
        serial: e.serial,
        notBefore: e.notBefore,
        notAfter: e.notAfter,
        resourceVersion: e.resourceVersion,
      }),
    }),
  );
}

/**
 * Whether two lists keep the same: the same Apps with the same certificate objects (a Snapshot
 * keeps a last good certificate as one object, and a warm start the file's).
 */
export function sameKeptCertificates(
  a: readonly KeptCertificate[] | undefined,
  b: readonly KeptCertificate[] | undefined,
): boolean {
  const [x, y] = [a ?? [], b ?? []];
  return (
    x.length === y.length &&
    x.every((k, i) => k.app === y[i]!.app && k.served === y[i]!.served && sameTls(k, y[i]!))
  );
}

function sameTls(a: KeptCertificate, b: KeptCertificate): boolean {
  return (
    a.secretRef.namespace === b.secretRef.namespace &&
    a.secretRef.name === b.secretRef.name &&
    a.hostnames.length === b.hostnames.length &&
    a.hostnames.every((h, i) => h === b.hostnames[i])
  );
}
