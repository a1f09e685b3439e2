import type { AgentService } from "../../control/agentService.js";
import type { CredentialService } from "../../control/credentialService.js";
import type { IamService } from "../../control/iamService.js";
import type { VaultService } from "../../control/vaultService.js";
import type { EnvironmentKeyService } from "../../coordinator/environmentKeyService.js";
import type { EnvironmentService } from "../../coordinator/environmentService.js";
import type { SessionService } from "../../coordinator/sessionService.js";
import type { WorkQueueService } from "../../coordinator/workQueueService.js";
import type { Clock } from "../../kernel/clock.js";
import type { StreamDeps } from "./sessionStream.js";

/** The application ports the Managed Agents edge calls; it holds no state of its own. */
export interface ManagedAgentsDeps {
  iam: IamService;
  agents: AgentService;
  environments: EnvironmentService;
  sessions: SessionService;
  /** Self-hosted environments: keys (an Awaken extension) and the work queue (wire §2.8). */
  environmentKeys: EnvironmentKeyService;
  workQueue: WorkQueueService;
  /** Vault ingress (wire §2.7, §5): secret-free projections out, sealed revisions stored. */
  vaults: VaultService;
  credentials: CredentialService;
  stream: StreamDeps;
  clock: Clock;
}

export const toMs = (iso: string | undefined): number | undefined =>
  iso === undefined ? undefined : Date.parse(iso);

export function rangeMs(range: { gt?: string; gte?: string; lt?: string; lte?: string } | undefined) {
  if (!range) return undefined;
  return { gt: toMs(range.gt), gte: toMs(range.gte), lt: toMs(range.lt), lte: toMs(range.lte) };
}
