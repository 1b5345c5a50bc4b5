import type { SecretObject } from "../kube/cache/list-watch.ts";
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from "../registry/parse.ts";
import { type CheckedUnder, REGISTRY_RULES, sameRules } from "../registry/rules.ts";
import type { AppSpec, Registry } from "../registry/schema.ts";
import type { RefusedAppStatus, RegistryStatus } from "../snapshot/types.ts";
import type { CheckedRegistry, KeptRegistry, RegistrySecret } from "./inputs.ts";
import {
  checkValue,
  contentHash,
  INLINE_CHECKER,
  type RegistryChecker,
  type ValueCheck,
} from "./registry-checker.ts";

/** The Registry to serve and what to report about it. */
export interface ServedRegistry {
  readonly registry: Registry | null;
  readonly status: RegistryStatus;
}

interface RegistryOptions {
  readonly key: string;
  readonly namespace: string;
  readonly maxDecompressedBytes?: number;
  /** Default false: Apps whose upstream is a local address are refused (ADR 48). */
  readonly allowLocalUpstreams?: boolean;
  /** Where values are checked; default this thread (INLINE_CHECKER). */
  readonly checker?: RegistryChecker;
}

function underOf(options: RegistryOptions): CheckedUnder {
  return {
    rules: REGISTRY_RULES,
    defaultNamespace: options.namespace,
    allowLocalUpstreams: options.allowLocalUpstreams ?? false,
    maxDecompressedBytes: options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
  };
}

/**
 * What a Registry Secret's value serves, alone (ADR 4): absent is a valid, empty Registry; a
 * missing key or a value refused whole serves none and reports the error (the tracker keeps the
 * last good Registry instead); a value with refused App entries serves its valid Apps
 * (`keepRefused` then keeps the last good version of each refused one).
 */
export function serveRegistry(secret: RegistrySecret, options: RegistryOptions): ServedRegistry {
  const value = secret.present ? secret.value : null;
  return servedOf(secret, options.key, value === null ? null : checkValue(value, underOf(options)));
}

/** What `secret` serves, `check` being its value's check (null when it has no value). */
function servedOf(secret: RegistrySecret, key: string, check: ValueCheck | null): ServedRegistry {
  if (!secret.present) return { registry: null, status: ABSENT };
  const status = (error: string | null, refusedApps: readonly RefusedAppStatus[] = []) => ({
    present: true,
    resourceVersion: secret.resourceVersion,
    error,
    refusedApps,
    contentHash: check?.contentHash ?? null,
  });
  if (check === null)
    return {
      registry: null,
      status: status(`invalid registry: key '${key}' is missing from the Secret`),
    };
  const { parsed } = check;
  if (!parsed.ok) return { registry: null, status: status(parsed.error.message) };
  const refused = parsed.value.refused.map((r) => ({ ...r, kept: false }));
  return { registry: parsed.value.registry, status: status(null, refused) };
}

const ABSENT: RegistryStatus = Object.freeze({
  present: false,
  resourceVersion: null,
  error: null,
  refusedApps: Object.freeze([]),
  contentHash: null,
});

/**
 * `served` with the last good version (from `previous`) of each refused App whose name no valid
 * entry took; the refusals say which were kept. The Registry itself when nothing is kept.
 */
export function keepRefused(served: ServedRegistry, previous: Registry | null): ServedRegistry {
  const { registry, status } = served;
  if (status.refusedApps.length === 0 || registry === null || previous === null) return served;
  const names = new Set(registry.apps.map((a) => a.name));
  const kept: AppSpec[] = [];
  const refusedApps = status.refusedApps.map((r) => {
    const last =
      r.name === null || names.has(r.name)
        ? undefined
        : previous.apps.find((a) => a.name === r.name);
    if (last === undefined) return r;
    names.add(last.name);
    kept.push(last);
    return { ...r, kept: true };
  });
  if (kept.length === 0) return served;
  return {
    registry: Object.freeze({ apps: Object.freeze([...registry.apps, ...kept]) }),
    status: { ...status, refusedApps },
  };
}

/**
 * Follows the Registry Secret's events and decides what to serve. Values are checked lazily, when
 * `serve` is called, and each distinct good value once (a relist or a label edit reuses it). When
 * the newest value is refused, the last good one is the newest good value the watch delivered,
 * even one never served because a later value replaced it first; a deletion in between makes
 * the last good Registry the empty one. A check may take a while (ADR 88): what was served stays
 * served until `serve` resolves, and values delivered meanwhile are served by the same call.
 */
export class RegistryTracker {
  readonly #options: RegistryOptions & { readonly name: string };
  readonly #under: CheckedUnder;
  readonly #checker: RegistryChecker;
  /** Values observed since the last `serve`, oldest first; the last is the current one. */
  #unserved: RegistrySecret[] = [];
  #current: RegistrySecret = { present: false };
  #parsed: { readonly value: string; readonly served: ServedRegistry } | null = null;
  /** The checks of values one `serve` asked for, good or not, until it resolves. */
  readonly #checks = new Map<string, Promise<ServedRegistry>>();
  #serving = false;
  #lastRefused: string | null = null;
  #served: Registry | null = null;
  /** What the last `serve` reported. */
  #status: RegistryStatus | null = null;

  constructor(options: RegistryOptions & { readonly name: string }) {
    this.#options = options;
    this.#under = underOf(options);
    this.#checker = options.checker ?? INLINE_CHECKER;
  }

  /**
   * Records a saved Registry Secret as `observe` does. With `checked`, the check saved with it,
   * which its value's next `serve` adopts instead of checking the value again when it was made
   * under this tracker's rules and options, from this very value (ADR 77). With `kept`, the
   * Registry in service beside it, which that `serve` keeps as the last good one when made under
   * these rules beside this very resourceVersion (ADR 91). True when the check was adopted.
   */
  observeSaved(
    object: SecretObject,
    saved: { readonly checked?: CheckedRegistry; readonly kept?: KeptRegistry },
  ): boolean {
    if (!this.observe(false, object) || !this.#current.present) return false;
    const { value, resourceVersion } = this.#current;
    const { checked, kept } = saved;
    if (kept !== undefined && kept.beside === resourceVersion && sameRules(kept.under, this.#under))
      this.#served = kept.registry;
    if (checked === undefined || value === null || !sameRules(checked.under, this.#under))
      return false;
    const hash = contentHash(value);
    if (hash !== checked.contentHash) return false;
    const status: RegistryStatus = {
      present: true,
      resourceVersion,
      error: null,
      refusedApps: checked.refused.map((r) => ({ ...r, kept: false })),
      contentHash: hash,
    };
    this.#parsed = { value, served: { registry: checked.registry, status } };
    return true;
  }

  /**
   * The Registry in service while the current value, served, is refused whole or keeps refused
   * Apps of an earlier one: what a state file saves beside that value (ADR 91). Null otherwise:
   * then the value alone serves what is in service.
   */
  get kept(): KeptRegistry | null {
    const current = this.#current;
    const [served, status] = [this.#served, this.#status];
    if (!current.present || served === null || status === null || this.#unserved.length > 0)
      return null;
    if (status.resourceVersion !== current.resourceVersion) return null;
    if (status.error === null && !status.refusedApps.some((r) => r.kept)) return null;
    return { under: this.#under, beside: current.resourceVersion, registry: served };
  }

  /** The check of the current value, when it was served and good: what a state file saves. */
  get checked(): CheckedRegistry | null {
    const current = this.#current;
    const parsed = this.#parsed;
    if (!current.present || current.value === null || parsed?.value !== current.value) return null;
    const { registry, status } = parsed.served;
    if (registry === null || status.contentHash === null) return null;
    const refused = status.refusedApps.map(({ index, name, reason }) => ({ index, name, reason }));
    return { under: this.#under, contentHash: status.contentHash, registry, refused };
  }

  /** Records an event; false when it is not about the Registry Secret (and changes nothing). */
  observe(deleted: boolean, object: SecretObject): boolean {
    const { namespace, name, resourceVersion } = object.metadata;
    if (namespace !== this.#options.namespace || name !== this.#options.name) return false;
    this.#current = deleted
      ? { present: false }
      : { present: true, resourceVersion, value: ownValue(object.data, this.#options.key) };
    this.#unserved.push(this.#current);
    return true;
  }

  /** The Registry Secret as the watch last saw it. */
  get current(): RegistrySecret {
    return this.#current;
  }

  /** True when events arrived since the last `serve` took them. */
  get hasUnserved(): boolean {
    return this.#unserved.length > 0;
  }

  /** The Registry the last `serve` decided on (null before the first, or when empty). */
  get served(): Registry | null {
    return this.#served;
  }

  /**
   * What to serve now, given the events so far and the Registry served last, and whether the
   * newest value is a refusal not reported before. Events that arrive while a check runs join
   * the ones taken: the newest value is served, older ones checked only if it needs them. One
   * call at a time (the mirror's adoption stage); another while one runs is a bug.
   */
  async serve(): Promise<ServedRegistry & { readonly newlyRefused: boolean }> {
    if (this.#serving) throw new Error("RegistryTracker.serve called while one runs");
    this.#serving = true;
    try {
      let values: RegistrySecret[] = [];
      let current: ServedRegistry;
      do {
        values = values.concat(this.#take(values.length === 0));
        current = await this.#inService(values, values.length - 1, this.#served);
      } while (this.#unserved.length > 0);
      const value = this.#current.present ? this.#current.value : null;
      const refused = current.status.error !== null;
      const newlyRefused = refused && (value === null || value !== this.#lastRefused);
      this.#lastRefused = refused ? value : null;
      this.#served = current.registry;
      this.#status = current.status;
      return { ...current, newlyRefused };
    } finally {
      this.#checks.clear();
      this.#serving = false;
    }
  }

  /** The values observed since the last take; the current one when none and `first`. */
  #take(first: boolean): RegistrySecret[] {
    const taken = this.#unserved.length > 0 || !first ? this.#unserved : [this.#current];
    this.#unserved = [];
    return taken;
  }

  /**
   * What serving `values[i]` puts in service, `before` having been in service before
   * `values[0]`: a value refused whole leaves the one before it; a value with refused App
   * entries keeps the version of each that was in service before it. Older values are checked
   * only when the newer one needs them, and each distinct value once.
   */
  async #inService(
    values: readonly RegistrySecret[],
    i: number,
    before: Registry | null,
  ): Promise<ServedRegistry> {
    const earlier = async (): Promise<Registry | null> =>
      i === 0 ? before : (await this.#inService(values, i - 1, before)).registry;
    const value = values[i]!;
    const served = await this.#check(value);
    if (served.status.error !== null) return { registry: await earlier(), status: served.status };
    if (served.status.refusedApps.length === 0) return served;
    return keepRefused(served, await earlier());
  }

  async #check(secret: RegistrySecret): Promise<ServedRegistry> {
    if (!secret.present || secret.value === null) return servedOf(secret, this.#options.key, null);
    const { value, resourceVersion } = secret;
    const known =
      value === this.#parsed?.value ? this.#parsed.served : await this.#checks.get(value);
    if (known !== undefined)
      return { registry: known.registry, status: { ...known.status, resourceVersion } };
    const checking = this.#checker
      .check(value, this.#under)
      .then((check) => servedOf(secret, this.#options.key, check));
    this.#checks.set(value, checking);
    const served = await checking;
    if (served.status.error === null) this.#parsed = { value, served };
    return served;
  }
}

/** The value under `key` when the data has that key of its own; null otherwise. */
function ownValue(data: Readonly<Record<string, string>> | undefined, key: string): string | null {
  return data !== undefined && Object.hasOwn(data, key) ? data[key]! : null;
}
