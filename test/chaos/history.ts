// The cluster's states in write order, each with the Registry the spec serves then (model.ts).
import {
  type ClusterState,
  type RegistryValue,
  type SecretState,
  secretId,
  servedApps,
  servedPartial,
} from "./model.ts";

/** The cluster's history as the model sees it: every state since the start, in write order. */
export class History {
  readonly states: ClusterState[] = [];

  constructor(initial: { registry: RegistryValue; registryRv: string | null }) {
    this.states.push(this.#derive(initial.registry, initial.registryRv, new Map(), 0));
  }

  get current(): ClusterState {
    return this.states[this.states.length - 1]!;
  }

  get latestIndex(): number {
    return this.states.length - 1;
  }

  /**
   * The index of the state that wrote the Registry Secret at `rv` (null: absent, its latest
   * absence); undefined when no state did.
   */
  registryWrittenAt(rv: string | null): number | undefined {
    return this.#writtenAt((s) => s.registryRv === rv);
  }

  /** The index of the state that wrote an App Secret at `rv`; undefined when no state did. */
  secretWrittenAt(namespace: string, name: string, rv: string): number | undefined {
    const id = secretId(namespace, name);
    return this.#writtenAt((s) => s.secrets.get(id)?.rv === rv);
  }

  /** The first state of the latest run of states that `holds`. */
  #writtenAt(holds: (s: ClusterState) => boolean): number | undefined {
    let i = this.states.length - 1;
    while (i >= 0 && !holds(this.states[i]!)) i--;
    if (i < 0) return undefined;
    while (i > 0 && holds(this.states[i - 1]!)) i--;
    return i;
  }

  setRegistry(registry: RegistryValue, rv: string | null): void {
    this.states.push(
      this.#derive(registry, rv, this.current.secrets, this.states.length, this.current),
    );
  }

  setSecret(namespace: string, name: string, secret: SecretState | undefined): void {
    const secrets = new Map(this.current.secrets);
    if (secret === undefined) secrets.delete(secretId(namespace, name));
    else secrets.set(secretId(namespace, name), secret);
    const c = this.current;
    this.states.push({ ...c, secrets });
  }

  #derive(
    registry: RegistryValue,
    registryRv: string | null,
    secrets: ReadonlyMap<string, SecretState>,
    index: number,
    previous?: ClusterState,
  ): ClusterState {
    if (registry.kind === "bad") {
      return {
        registry,
        registryRv,
        secrets,
        served: previous?.served ?? [],
        lastGoodIndex: previous?.lastGoodIndex ?? index,
      };
    }
    if (registry.kind === "partial") {
      const served = servedPartial(registry, previous?.served ?? []);
      return { registry, registryRv, secrets, served, lastGoodIndex: index };
    }
    const served = registry.kind === "good" ? servedApps(registry.apps) : [];
    return { registry, registryRv, secrets, served, lastGoodIndex: index };
  }
}
