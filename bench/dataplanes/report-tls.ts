// The TLS figures (issue 44): per proxy, certificates pushed by the sidecar against the same proxy
// loading them from files, handshakes per second and kept-alive requests per second over TLS,
// each the median over rounds of a round's ratio; the proxy's CPU per handshake; then rotations
// under a handshake load, p50 / p99 / max, and the handshakes that failed meanwhile.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, quantile, type Row } from "../measure.ts";
import { k } from "./compare.ts";
import type { TlsData, TlsRound } from "./tls-data.ts";

/** Pushed against files, each figure (issue 44). */
export const TLS_RATIO_TARGET = 0.95;
/** Rotation p99 under load, ms, by proxy (issue 44: none for Caddy, whose every change reloads). */
export const TLS_ROTATION_P99_MS: Partial<Record<PlaneKind, number>> = { haproxy: 50, nginx: 50 };

const medianOf = (rounds: readonly TlsRound[], f: (r: TlsRound) => number) => median(rounds.map(f));

/** The rows of a TLS run. */
export function tlsRows(data: TlsData): Row[] {
  const rows: Row[] = [];
  const setup = `${data.certificates} certificates at ${k(data.apps)} Apps, ${data.rounds} rounds x ${data.seconds} s`;
  for (const [kind, sides] of Object.entries(data.runs) as [
    PlaneKind,
    NonNullable<TlsData["runs"][PlaneKind]>,
  ][]) {
    const { pushed, files } = sides;
    const ratio = (f: (r: TlsRound) => number) => median(pushed.map((p, i) => f(p) / f(files[i]!)));
    const hs = ratio((r) => r.handshakesPerS);
    const rps = ratio((r) => r.rps);
    const failed = [...pushed, ...files].reduce((n, r) => n + r.handshakeFailures + r.failures, 0);
    rows.push(
      {
        bench: `${kind} zero-hop TLS: handshakes/s, certificates pushed (${setup}, ${data.handshakeConnections} handshake loops, a request each)`,
        figure: `${k(medianOf(pushed, (r) => r.handshakesPerS))}/s`,
        baseline: `from files ${k(medianOf(files, (r) => r.handshakesPerS))}/s`,
        ratio: `${fmt(hs, 2)}x`,
        target: `>= ${fmt(TLS_RATIO_TARGET, 2)}x`,
        met: hs >= TLS_RATIO_TARGET ? "yes" : "no",
      },
      {
        bench: `${kind} zero-hop TLS: the proxy's CPU per handshake (same runs; ${failed} connections failed)`,
        figure: `${fmt(
          medianOf(pushed, (r) => r.proxyCpuUsPerHandshake),
          0,
        )} µs`,
        baseline: `from files ${fmt(
          medianOf(files, (r) => r.proxyCpuUsPerHandshake),
          0,
        )} µs`,
        ratio: `${fmt(
          ratio((r) => r.proxyCpuUsPerHandshake),
          2,
        )}x`,
        target: "reported",
        met: "-",
      },
      {
        bench: `${kind} zero-hop TLS: req/s over kept-alive connections (${data.connections} connections)`,
        figure: `${k(medianOf(pushed, (r) => r.rps))} req/s`,
        baseline: `from files ${k(medianOf(files, (r) => r.rps))}`,
        ratio: `${fmt(rps, 2)}x`,
        target: `>= ${fmt(TLS_RATIO_TARGET, 2)}x`,
        met: rps >= TLS_RATIO_TARGET ? "yes" : "no",
      },
    );
  }
  for (const [kind, r] of Object.entries(data.rotations) as [
    PlaneKind,
    NonNullable<TlsData["rotations"][PlaneKind]>,
  ][]) {
    const p99 = quantile(r.samples, 0.99);
    const target = TLS_ROTATION_P99_MS[kind];
    rows.push({
      bench: `${kind} zero-hop TLS: certificate rotation, API write to the next handshake, p50 / p99 / max (${r.samples.length} rotations under the handshake load; ${r.failed} of ${r.handshakes} handshakes failed)`,
      figure: `${fmt(quantile(r.samples, 0.5), 1)} / ${fmt(p99, 1)} / ${fmt(Math.max(...r.samples), 1)} ms`,
      baseline: "-",
      ratio: "-",
      target: target === undefined ? "reported, 0 failed" : `p99 < ${target} ms, 0 failed`,
      met:
        target === undefined
          ? r.failed === 0
            ? "-"
            : "no"
          : p99 < target && r.failed === 0
            ? "yes"
            : "no",
    });
  }
  for (const [kind, why] of Object.entries(data.unmeasured))
    rows.push({
      bench: `${kind} zero-hop TLS: not measured (${why})`,
      figure: "-",
      baseline: "-",
      ratio: "-",
      target: "-",
      met: "no",
    });
  return rows;
}
