// What the main thread sends the data thread, and how the data thread turns it into the view it
// answers from. Two kinds of message: the routes of a Registry (its hostname indexes and
// each App's name and upstream), sent as soon as the Registry is adopted, before the App Secrets
// are listed; and, for each published Snapshot, the state and credential of its Apps against
// routes already sent. Pure: plain values in, plain values out.
//
// The messages are structured-cloned, so the long lists travel as text with one item a line and
// as typed arrays: a clone of a string is a copy, where a clone of a Map of 11k hosts walks every
// entry. Hostnames and App names never hold a line break (the Registry's rules); an upstream
// travels as its header value (`headerValue`), which is visible ASCII, so neither does it; nor
// does a credential (`credentialValue` and the prefix rule refuse CR and LF), never empty either.

import { headerValue, isVisibleAsciiLines } from "../answers/header-value.ts";
import { appAt, CHUNK_SIZE, chunked, replaceSlots } from "../snapshot/app-table.ts";
import { forChangedChunks } from "../snapshot/chunk-changes.ts";
import type { AppState, RouteApp, RouteTable, RouteView, Snapshot } from "../snapshot/types.ts";

/** The routes of one Registry on the wire, named by `id` for the views that use them. */
export interface RoutesMessage {
  readonly id: number;
  readonly exact: HostIndex;
  readonly wildcard: HostIndex;
  /** The Apps' names in slot order, one a line. */
  readonly names: string;
  /** The Apps' upstreams as header values in slot order, one a line (empty for none). */
  readonly upstreams: string;
  /** One byte per slot: 1 when the App has an upstream. */
  readonly hasUpstream: Uint8Array;
}

/** A hostname index on the wire: its keys one a line, and the slot of each. */
export interface HostIndex {
  readonly keys: string;
  readonly slots: Int32Array;
}

/** Routes as the data thread keeps them until a view uses them. */
export interface Routes {
  readonly id: number;
  readonly index: RouteView["routes"];
  /** Each App's name and upstream, by slot. */
  readonly apps: readonly { readonly name: string; readonly upstream: string | null }[];
}

/** An App's state on the wire: its index here, one byte. */
const STATES: readonly AppState[] = [
  "ready",
  "secret-unavailable",
  "secret-unusable",
  "credentials-off",
];
const STATE_CODE: Readonly<Record<AppState, number>> = {
  ready: 0,
  "secret-unavailable": 1,
  "secret-unusable": 2,
  "credentials-off": 3,
};

/**
 * `whole`: every App's state (one byte a slot, `STATES`) and credential (one a line, empty for
 * none), against the routes `routes` names; sent for the first Snapshot and whenever the routes
 * changed. `changes`: the same routes as the view before, and each slot whose state or credential
 * changed (a rotation keeps an App ready with another credential); none when only the revision
 * moved on.
 */
export type ViewUpdate =
  | {
      readonly kind: "whole";
      readonly revision: number;
      readonly routes: number;
      readonly states: Uint8Array;
      readonly credentials: string;
    }
  | {
      readonly kind: "changes";
      readonly revision: number;
      readonly changed: readonly (readonly [
        slot: number,
        state: number,
        credential: string | null,
      ])[];
    };

const lines = (text: string): string[] => (text === "" ? [] : text.split("\n"));

/** A Registry's routes as the data thread is sent them. */
export function routesMessage(id: number, routes: RouteTable): RoutesMessage {
  const { specs } = routes;
  const hasUpstream = new Uint8Array(specs.length);
  for (let slot = 0; slot < specs.length; slot++)
    if (specs[slot]!.upstream !== null) hasUpstream[slot] = 1;
  return {
    id,
    exact: encodeIndex(routes.exact),
    wildcard: encodeIndex(routes.wildcard),
    names: routes.names.join("\n"),
    upstreams: upstreamLines(specs),
    hasUpstream,
  };
}

/**
 * The upstreams as header values, one a line. Upstreams are almost always header values already:
 * one test of the joined text finds that out, where `headerValue` per upstream would scan each
 * in a loop, which at start-up (cold code, 10k Apps) took longer than the rest of the message.
 */
function upstreamLines(specs: RouteTable["specs"]): string {
  const joined = specs.map((s) => s.upstream ?? "").join("\n");
  // An upstream with a line break of its own shows as one line too many.
  if (isVisibleAsciiLines(joined) && joined.split("\n").length === specs.length) return joined;
  return specs.map((s) => (s.upstream === null ? "" : headerValue(s.upstream))).join("\n");
}

/** The routes the data thread keeps from a `routesMessage`. */
export function readRoutes(message: RoutesMessage): Routes {
  const names = lines(message.names);
  const upstreams = message.upstreams.split("\n");
  return {
    id: message.id,
    index: Object.freeze({
      exact: decodeIndex(message.exact),
      wildcard: decodeIndex(message.wildcard),
    }),
    apps: names.map((name, slot) => ({
      name,
      upstream: message.hasUpstream[slot] === 1 ? upstreams[slot]! : null,
    })),
  };
}

function encodeIndex(index: ReadonlyMap<string, number>): HostIndex {
  return { keys: [...index.keys()].join("\n"), slots: Int32Array.from(index.values()) };
}

function decodeIndex(index: HostIndex): Map<string, number> {
  const keys = lines(index.keys);
  const map = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) map.set(keys[i]!, index.slots[i]!);
  return map;
}

/**
 * The update that takes a view of `sent` (the Snapshot last sent, null before the first) to a
 * view of `next`, whose routes were sent as `routes`. Costs a walk of the Apps only when the
 * routes changed; otherwise a look at the chunks a Secret-only rebuild replaced (it shares every
 * untouched chunk).
 */
export function viewUpdate(sent: Snapshot | null, next: Snapshot, routes: number): ViewUpdate {
  const { apps } = next;
  if (sent === null || sent.routes !== next.routes) {
    const states = new Uint8Array(apps.size);
    const credentials: string[] = [];
    let slot = 0;
    for (const chunk of apps.chunks)
      for (const app of chunk) {
        states[slot++] = STATE_CODE[app.state];
        credentials.push(app.credential ?? "");
      }
    return {
      kind: "whole",
      revision: next.revision,
      routes,
      states,
      credentials: credentials.join("\n"),
    };
  }
  const changed: [number, number, string | null][] = [];
  forChangedChunks(sent.apps.chunks, apps.chunks, (c) => {
    const before = sent.apps.chunks[c]!;
    apps.chunks[c]!.forEach((app, i) => {
      const was = before[i]!;
      if (app.state !== was.state || app.credential !== was.credential)
        changed.push([c * CHUNK_SIZE + i, STATE_CODE[app.state], app.credential]);
    });
  });
  return { kind: "changes", revision: next.revision, changed };
}

/**
 * The view after `update`; shares every untouched chunk with `view`. `routes`: the routes a
 * `whole` update names. Its upstreams are header values already, which `headerValue` leaves as
 * they are. The view's Apps are plain objects: the view is the data thread's alone.
 */
export function applyViewUpdate(
  view: RouteView | null,
  update: ViewUpdate,
  routes: Routes | undefined,
): RouteView {
  if (update.kind === "whole") {
    // Routes are always sent before the first view that uses them, and kept until it arrives.
    if (routes === undefined || routes.id !== update.routes)
      throw new Error(`a view arrived before its routes (${update.routes})`);
    const credentials = update.credentials.split("\n");
    const apps: RouteApp[] = routes.apps.map(({ name, upstream }, slot) => ({
      name,
      upstream,
      state: STATES[update.states[slot]!]!,
      credential: credentials[slot] || null,
    }));
    return Object.freeze({
      revision: update.revision,
      routes: routes.index,
      apps: Object.freeze({ chunks: chunked(apps) }),
    });
  }
  // The first view of a thread is always whole.
  if (view === null) throw new Error("a changes update arrived before any whole view");
  const replacements = new Map<number, RouteApp>();
  for (const [slot, state, credential] of update.changed) {
    const { name, upstream } = appAt(view.apps, slot)!;
    replacements.set(slot, { name, upstream, state: STATES[state]!, credential });
  }
  return Object.freeze({
    revision: update.revision,
    routes: view.routes,
    apps: Object.freeze({ chunks: replaceSlots(view.apps.chunks, replacements) }),
  });
}
