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
