// What a Registry value's check depends on besides the value: the rules of this build and the
// options that relax or fill them in. A check saved under the same (a state file's checked
// Registry, ADR 77) stands in for checking the value again; under any other, it does not.

/**
 * The version of the Registry's rules: its schema, the naming rules, hostname normalisation, the
 * local-upstream rule, the caps and the defaults filled in (src/registry/). Raised by any change
 * that could read some value as another Registry or other refusals; test/registry/rules.test.ts
 * fails on a change to those files until its fingerprint is renewed, and asks for it.
 */
export const REGISTRY_RULES = 1;

/** The rules and options one Registry value was checked under. */
export interface CheckedUnder {
  /** REGISTRY_RULES of the build that checked it. */
  readonly rules: number;
  /** The Registry Secret's namespace: the default of every `secretRef.namespace`. */
  readonly defaultNamespace: string;
  readonly allowLocalUpstreams: boolean;
  /** The cap on a gzip value's decompressed size. */
  readonly maxDecompressedBytes: number;
}

/** Whether a check made under `a` is the check `b` would make. */
export const sameRules = (a: CheckedUnder, b: CheckedUnder): boolean =>
  a.rules === b.rules &&
  a.defaultNamespace === b.defaultNamespace &&
  a.allowLocalUpstreams === b.allowLocalUpstreams &&
  a.maxDecompressedBytes === b.maxDecompressedBytes;
