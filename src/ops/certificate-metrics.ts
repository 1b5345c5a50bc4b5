// The certificates' side of `/metrics` (ADR 56): how many Apps' certificates are served, refused
// or off, and when the first served one expires, which the alert ReplicaMirrorCertificateExpiring
// reads. Summed per App chunk and kept while the chunk lives, and only when `/metrics` is scraped:
// a publish costs nothing here, a scrape after one Secret changed a pass over the chunk directory.

import { Gauge, type Registry } from "prom-client";
import { cachedPer } from "../cached-per.ts";
import type { MirrorObserver } from "../mirror/observer.ts";
import type { App, AppCertificate, Snapshot } from "../snapshot/types.ts";

const PREFIX = "replica_mirror_";
const STATES: readonly AppCertificate["state"][] = ["served", "refused", "off"];

/** One chunk's certificates: a count per state, and the earliest `notAfter` of those served. */
interface Summary {
  readonly counts: Readonly<Record<AppCertificate["state"], number>>;
  /** Of the certificates served (the last good ones of refused Apps too); Infinity: none. */
  readonly firstExpiry: number;
}

const summaryOf = cachedPer((chunk: readonly App[]): Summary => {
  const counts = { served: 0, refused: 0, off: 0 };
  let firstExpiry = Number.POSITIVE_INFINITY;
  for (const { certificate } of chunk) {
    if (certificate === null) continue;
    counts[certificate.state]++;
    if (certificate.served !== null)
      firstExpiry = Math.min(firstExpiry, certificate.served.notAfter);
  }
  return { counts, firstExpiry };
});

/** The counts and first expiry of a whole Snapshot. */
export function certificateSummary(snapshot: Snapshot): Summary {
  const counts = { served: 0, refused: 0, off: 0 };
  let firstExpiry = Number.POSITIVE_INFINITY;
  for (const chunk of snapshot.apps.chunks) {
    const s = summaryOf(chunk);
    for (const state of STATES) counts[state] += s.counts[state];
    firstExpiry = Math.min(firstExpiry, s.firstExpiry);
  }
  return { counts, firstExpiry };
}

/** One summary per Snapshot, for both gauges of one scrape. */
const snapshotSummary = cachedPer(certificateSummary);

/** Registers the certificate gauges in `registry`; they follow each published Snapshot. */
export function certificateMetrics(registry: Registry): MirrorObserver {
  let served: Snapshot | null = null;
  const summary = (): Summary | null => (served === null ? null : snapshotSummary(served));
  const registers = [registry];
  new Gauge({
    name: `${PREFIX}certificates`,
    help: "Apps with tls, by their certificate's state: served, refused (the last good one, if any, still served) or off (--serve-certificates false).",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const s = summary();
      for (const state of STATES) this.labels(state).set(s?.counts[state] ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}certificate_first_expiry_timestamp_seconds`,
    help: "When the first of the served certificates expires, in seconds since the epoch; absent while none is served.",
    registers,
    collect() {
      this.reset();
      const s = summary();
      if (s !== null && Number.isFinite(s.firstExpiry)) this.set(s.firstExpiry / 1000);
    },
  });
  return {
    published({ snapshot }) {
      served = snapshot;
    },
  };
}
