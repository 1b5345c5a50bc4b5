import type { Registry, SecretRef } from "../registry/schema.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/** The Secrets a Registry references: the only ones whose bytes this replica keeps. */
export function deriveWatchedSet(registry: Registry | null): SecretIndex<true> {
  const watched = new SecretIndex<true>();
  for (const app of registry?.apps ?? [])
    watched.set(app.secretRef.namespace, app.secretRef.name, true);
  return watched;
}

/** Secrets in `next` but not in `previous`: their bytes were dropped and must be fetched. */
export function addedSecrets(previous: SecretIndex<true>, next: SecretIndex<true>): SecretRef[] {
  const added: SecretRef[] = [];
  for (const [namespace, name] of next.entries())
    if (!previous.has(namespace, name)) added.push({ namespace, name });
  return added;
}

/** Both sets at once: the set watched while newly referenced Secrets are being fetched. */
export function unionOf(a: SecretIndex<true>, b: SecretIndex<true>): SecretIndex<true> {
  const union = new SecretIndex<true>();
  for (const [namespace, name] of a.entries()) union.set(namespace, name, true);
  for (const [namespace, name] of b.entries()) union.set(namespace, name, true);
  return union;
}
