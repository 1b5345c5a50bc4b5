/** The fake Kubernetes API server for Secrets: the public surface. */

export { seededRandom } from "./chunking.ts";
export { type EnvtestArgs, parseEnvtestArgs, runEnvtest, untilSignal } from "./cli.ts";
export type { DirectSecret } from "./direct-writes.ts";
export { type Envtest, type EnvtestOptions, startEnvtest } from "./envtest.ts";
export type {
  ChunkingMode,
  FailRule,
  Faults,
  FaultVerb,
  GarbageKind,
  ThrottleRule,
} from "./faults.ts";
export { DEFAULT_FEATURE_GATES, type FeatureGates } from "./feature-gates.ts";
export {
  clientToken,
  ENVTEST_TOKEN,
  type KubeconfigOptions,
  kubeconfigYaml,
} from "./kubeconfig.ts";
export type { ListRead } from "./list.ts";
export type { RequestLog, RequestLogEntry, RequestLogOptions } from "./request-log.ts";
export type { RequestSummary, RequestTotals, Resource, SecondCount } from "./request-totals.ts";
export type { DownMode, RestartOptions } from "./restart.ts";
export type { Verb } from "./routes.ts";
export type { ManagedFieldsEntry, ObjectMeta, SecretJSON } from "./secret.ts";
export { DEMO_REGISTRY, DEMO_SHOP_TOKEN, seedDemo } from "./seed.ts";
export type { Status, StatusCause, StatusDetails } from "./status.ts";
export { EnvtestState } from "./store.ts";
