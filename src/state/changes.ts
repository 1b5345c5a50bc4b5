// What changed between two states one writer wrote in turn: what a journal record holds (ADR 79).
// Two captures of the store a few changes apart are linked by its own records of what changed
// (listChanges): a one-App change costs one App, whatever the store holds. Otherwise found by
// identity: the store replaces a Secret's object whenever anything of it changes and keeps the
// rest, in the same order, so two captures of it are compared a pointer at a time; a Secret
// added or removed is found by key in what is left after the first difference. Objects that
// differ are compared by content: the first state after a warm start is the file's.

import type {
  AppSecret,
  AppSecretList,
  CheckedRegistry,
  KeptRegistry,
  MirrorInputs,
  RegistrySecret,
} from "../mirror/inputs.ts";
import { listArray, listChanges } from "../mirror/listed-index.ts";
import { sameRules } from "../registry/rules.ts";
import type { KeptCertificate } from "../snapshot/types.ts";
import { sameKeptCertificates } from "./kept-certificates.ts";

/** Where an App Secret is: what a record names to remove it. */
export interface SecretKey {
  readonly namespace: string;
  readonly name: string;
}

/** From one state to the next. */
export interface StateChanges {
  /** App Secrets added or changed, whole. */
  readonly set: readonly AppSecret[];
  /** App Secrets no longer present. */
  readonly removed: readonly SecretKey[];
  /** The Registry Secret, when it changed. */
  readonly registry?: RegistrySecret;
  /** The Registry's check, when it changed; null: none any more. */
  readonly checked?: CheckedRegistry | null;
  /** The Registry kept beside a refused value (ADR 91), when it changed; null: none any more. */
  readonly kept?: KeptRegistry | null;
  /** The last good certificates kept (ADR 92), when they changed; null: none any more. */
  readonly certificates?: readonly KeptCertificate[] | null;
}

/** Secrets compared between two turns of the event loop. */
const SLICE = 8_192;

const turn = (): Promise<void> => new Promise(setImmediate);
const keyOf = (s: SecretKey): string => `${s.namespace}/${s.name}`;

/**
 * The changes from `before` to `after`. Their App Secrets are captures of the store: an object
 * the same in both is the same Secret unchanged. Gives the event loop a turn every SLICE Secrets.
 */
export async function changesBetween(
  before: MirrorInputs,
  after: MirrorInputs,
): Promise<StateChanges> {
  const secrets = await secretChanges(before.secrets, after.secrets);
  const registry = sameRegistry(before.registry, after.registry)
    ? {}
    : { registry: after.registry };
  const checked =
    checkOf(before.checked) === checkOf(after.checked) ? {} : { checked: after.checked ?? null };
  const kept = sameKept(before.kept, after.kept) ? {} : { kept: after.kept ?? null };
  const certificates = sameKeptCertificates(before.certificates, after.certificates)
    ? {}
    : { certificates: after.certificates ?? null };
  return { ...secrets, ...registry, ...checked, ...kept, ...certificates };
}

async function secretChanges(
  captured: AppSecretList,
  capturedAfter: AppSecretList,
): Promise<Pick<StateChanges, "set" | "removed">> {
  const linked = listChanges(captured, capturedAfter);
  if (linked !== null) return linked;
  const [before, after] = [listArray(captured), listArray(capturedAfter)];
  const set: AppSecret[] = [];
  const shared = Math.min(before.length, after.length);
  let i = 0;
  for (; i < shared; i++) {
    if (i > 0 && i % SLICE === 0) await turn();
    const [b, a] = [before[i]!, after[i]!];
    if (b === a) continue;
    if (b.namespace !== a.namespace || b.name !== a.name) break;
    if (!sameSecret(b, a)) set.push(a);
  }
  if (i === before.length && i === after.length) return { set, removed: [] };
  // An insertion or a removal: the rest is matched by key.
  const left = new Map<string, AppSecret>();
  for (let j = i; j < before.length; j++) {
    left.set(keyOf(before[j]!), before[j]!);
    if ((j + 1) % SLICE === 0) await turn();
  }
  for (let j = i; j < after.length; j++) {
    const a = after[j]!;
    const key = keyOf(a);
    const b = left.get(key);
    left.delete(key);
    if (b === undefined || !sameSecret(b, a)) set.push(a);
    if ((j + 1) % SLICE === 0) await turn();
  }
  const removed = [...left.values()].map(({ namespace, name }) => ({ namespace, name }));
  return { set, removed };
}

/**
 * Whether two captures of one Secret hold the same: the same object, or (a store seeded from the
 * state file holds its own objects) the same version and values, compared as the same strings
 * where the store kept the file's.
 */
function sameSecret(b: AppSecret, a: AppSecret): boolean {
  if (b === a) return true;
  if (b.resourceVersion !== a.resourceVersion) return false;
  const keys = Object.keys(a.data);
  if (keys.length !== Object.keys(b.data).length) return false;
  return keys.every((k) => Object.hasOwn(b.data, k) && b.data[k] === a.data[k]);
}

function sameRegistry(a: RegistrySecret, b: RegistrySecret): boolean {
  if (!a.present || !b.present) return a.present === b.present;
  return a.resourceVersion === b.resourceVersion && a.value === b.value;
}

/**
 * What a check was made from and under, as one string (null: none): a check follows from its
 * value's hash and its rules, and the tracker builds a new object for each capture.
 */
function checkOf(checked: CheckedRegistry | undefined): string | null {
  if (checked === undefined) return null;
  const { rules, defaultNamespace, allowLocalUpstreams, maxDecompressedBytes } = checked.under;
  const under = [rules, defaultNamespace, allowLocalUpstreams, maxDecompressedBytes];
  return JSON.stringify([checked.contentHash, ...under]);
}

/**
 * Whether two kept Registries are the same: the tracker keeps the Registry it serves, one object
 * until it serves another, and a warm start keeps the file's.
 */
export function sameKept(a: KeptRegistry | undefined, b: KeptRegistry | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.registry === b.registry && a.beside === b.beside && sameRules(a.under, b.under);
}
