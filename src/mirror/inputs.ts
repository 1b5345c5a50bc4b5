// What a mirror's Snapshots are built from, as plain values: what a state file keeps so that a
// restarted replica can serve at once and resume its watches without a list.

import type { RefusedApp } from "../registry/parse.ts";
import type { CheckedUnder } from "../registry/rules.ts";
import type { Registry } from "../registry/schema.ts";
import type { KeptCertificate } from "../snapshot/types.ts";
import type { ListCapture } from "./listed-index.ts";

/** The Registry Secret as the watch last saw it: what the Registry is parsed from. */
export type RegistrySecret =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly resourceVersion: string;
      /** The Registry key's value as bytes (one character per byte); null: the key is missing. */
      readonly value: string | null;
    };

/** A referenced App Secret: only the keys some App reads, as bytes. */
export interface AppSecret {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly data: Readonly<Record<string, string>>;
}

/** App Secrets in a fixed order: an array, or a capture of the store (`ListedIndex.list`). */
export type AppSecretList = readonly AppSecret[] | ListCapture<AppSecret>;

/** The inputs of a mirror at one moment, and how far each watch had got. */
export interface MirrorInputs {
  readonly registry: RegistrySecret;
  /** The referenced App Secrets present; one absent here was absent. */
  readonly secrets: AppSecretList;
  readonly watches: WatchPositions;
  /**
   * What the Registry Secret's value served when it was checked, when it was good: a warm start
   * under the same rules adopts it instead of checking the value again (ADR 77).
   */
  readonly checked?: CheckedRegistry;
  /**
   * The Registry in service beside a value refused whole or in part: the last good one, or the
   * value's valid Apps with the last good version of each refused one. Without it a warm start
   * would serve the refused value alone: no App, or none of the refused ones (ADR 91).
   */
  readonly kept?: KeptRegistry;
  /**
   * Each App's last good certificate while its TLS Secret's is refused: without them a warm
   * start would serve such an App none (ADR 92).
   */
  readonly certificates?: readonly KeptCertificate[];
}

/** A Registry value's check, as the check left it, and what it depended on. */
export interface CheckedRegistry {
  readonly under: CheckedUnder;
  /** The contentHash of the value it was checked from (RegistryStatus.contentHash). */
  readonly contentHash: string;
  /** Its valid Apps, as the check builds them. */
  readonly registry: Registry;
  /** Its refused App entries. */
  readonly refused: readonly RefusedApp[];
}

/** The Registry in service beside a refused value, and the rules its Apps were checked under. */
export interface KeptRegistry {
  readonly under: CheckedUnder;
  /** The resourceVersion of the Registry Secret it was in service beside. */
  readonly beside: string;
  readonly registry: Registry;
}

/** How far each watch had got: the resourceVersion a resumed watch starts from. */
export interface WatchPositions {
  readonly registry: string;
  /** One per App Secret scope. */
  readonly secrets: readonly ScopePosition[];
}

/** How far one App Secret watch had got: a namespace, or null for the cluster-wide one. */
export interface ScopePosition {
  readonly namespace: string | null;
  readonly resourceVersion: string;
}

/** A warm start: the inputs a previous run saved, and when they were known current. */
export interface WarmStart {
  readonly inputs: MirrorInputs;
  /** Milliseconds since the epoch. */
  readonly savedAt: number;
}
