// A Reflector wired to a FakeListWatch and a FakeClock, recording what it delivers.

import { afterEach, expect } from "vitest";
import { Reflector, type ReflectorOptions } from "../../src/kube/cache/reflector.ts";
import type { ReflectorStatus } from "../../src/kube/cache/reflector-status.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { FakeListWatch } from "./fake-list-watch.ts";

interface Harness {
  readonly clock: FakeClock;
  readonly lw: FakeListWatch;
  /** Deliveries as "TYPE namespace/name@resourceVersion", and "SYNCED". */
  readonly log: string[];
  readonly statuses: ReflectorStatus[];
  readonly reflector: Reflector;
  /** Starts the reflector and lets it run until it waits on the fake. */
  start(): Promise<void>;
  /** Statuses of one kind, without the kind field. */
  reported<K extends ReflectorStatus["kind"]>(
    kind: K,
  ): Omit<Extract<ReflectorStatus, { kind: K }>, "kind">[];
}

const running: Harness[] = [];

// Every test ends with the reflector stopped and no timer left on the clock.
afterEach(async () => {
  for (const h of running.splice(0)) {
    await h.reflector.stop();
    expect(h.clock.pending()).toEqual([]);
  }
});

/**
 * A harness with watchTimeoutSeconds 1 and random() = 0 unless overridden. Its server refuses
 * streaming lists unless `streamingLists` says otherwise, so a test scripts a list, then a watch.
 */
export function harness(options: Partial<ReflectorOptions> = {}): Harness {
  const clock = new FakeClock();
  const lw = new FakeListWatch();
  const log: string[] = [];
  const statuses: ReflectorStatus[] = [];
  const reflector = new Reflector({
    name: "test",
    listWatch: lw,
    clock,
    random: () => 0,
    watchTimeoutSeconds: 1,
    handler: {
      onEvent: ({ type, object: { metadata: m } }) => {
        log.push(`${type} ${m.namespace}/${m.name}@${m.resourceVersion}`);
      },
      onSynced: () => {
        log.push("SYNCED");
      },
    },
    onStatus: (s) => {
      statuses.push(s);
    },
    streamingLists: new StreamingLists(false),
    ...options,
  });
  const h: Harness = {
    clock,
    lw,
    log,
    statuses,
    reflector,
    async start() {
      reflector.start();
      await settle();
    },
    reported<K extends ReflectorStatus["kind"]>(kind: K) {
      return statuses
        .filter((s): s is Extract<ReflectorStatus, { kind: K }> => s.kind === kind)
        .map(({ kind: _, ...rest }) => rest);
    },
  };
  running.push(h);
  return h;
}
