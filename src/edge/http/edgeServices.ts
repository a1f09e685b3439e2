import type { AdminAuditReader } from "../../control/adminAudit.js";
import type { AgentService } from "../../control/agentService.js";
import type { ConsentService } from "../../control/consent.js";
import type { CredentialService } from "../../control/credentialService.js";
import type { IamService } from "../../control/iamService.js";
import type { UserProfileService } from "../../control/userProfiles.js";
import type { CredentialOpenAudit } from "../../control/vaultPorts.js";
import type { VaultService } from "../../control/vaultService.js";
import type { SubjectErasureService } from "../../coordinator/dataSubjects.js";
import type { EnvironmentKeyService } from "../../coordinator/environmentKeyService.js";
import type { EnvironmentService } from "../../coordinator/environmentService.js";
import type { ImageBuildService } from "../../coordinator/imageBuilds/imageBuildService.js";
import type { HistoryReader } from "../../coordinator/ports.js";
import type { PushOutboxStore } from "../../coordinator/pushOutbox.js";
import type { SessionChangeFeed } from "../../coordinator/sessionChangeFeed.js";
import type { SessionEntry } from "../../coordinator/sessionEntry.js";
import type { SessionService } from "../../coordinator/sessionService.js";
import type { SessionTail } from "../../coordinator/sessionTail.js";
import type { TunnelService } from "../../coordinator/tunnels/tunnelService.js";
import type { WebhookService } from "../../coordinator/webhookService.js";
import type { WorkerRoster } from "../../coordinator/workerRoster.js";
import type { WorkQueueService } from "../../coordinator/workQueueService.js";
import type { QuotaUsageReader, WorkspaceLimits } from "../../coordinator/workspaceQuotas.js";
import type { DeploymentService } from "../../deployments/deploymentService.js";
import type { DreamService } from "../../dreams/dreamService.js";
import type { Clock } from "../../kernel/clock.js";
import type { ModelCatalog } from "../../providers/modelCatalogPort.js";
import type { ResourceServices } from "../../resources/services.js";
import type { CONTROL_METHODS } from "./controlPorts.js";
import type { WebhookTargets } from "./webhookTargets.js";

/** Committed history reads for the edges; live views come from the session tail. */
export interface StreamDeps {
  history: HistoryReader;
  /** Keep-alive interval of every edge's event stream. */
  pingMs: number;
}

/**
 * Control's services as the edges use them: in process (all-in-one, Control) or over the private
 * link (a split Coordinator), where every method is a call to Control.
 */
export type IamPort = Pick<IamService, (typeof CONTROL_METHODS.iam)[number]>;
export type AgentsPort = Pick<AgentService, (typeof CONTROL_METHODS.agents)[number]>;
export type VaultsPort = Pick<VaultService, (typeof CONTROL_METHODS.vaults)[number]>;
export type CredentialsPort = Pick<CredentialService, (typeof CONTROL_METHODS.credentials)[number]>;
export type ConsentsPort = Pick<ConsentService, (typeof CONTROL_METHODS.consents)[number]>;
export type UserProfilesPort = Pick<UserProfileService, (typeof CONTROL_METHODS.userProfiles)[number]>;

/** The application services every edge adapter calls; edges hold no state of their own. */
export interface EdgeServices {
  iam: IamPort;
  agents: AgentsPort;
  environments: EnvironmentService;
  /** Container image builds (derived images): the environment's `awaken_image` and its rebuild. */
  imageBuilds?: ImageBuildService | undefined;
  sessions: SessionService;
  /** How every edge opens a session (agent pinning, default environment, client-named sessions). */
  entry: SessionEntry;
  /** Self-hosted environments: keys (an Awaken extension) and the work queue. */
  environmentKeys: EnvironmentKeyService;
  workQueue: WorkQueueService;
  /** Vault ingress: secret-free projections out, sealed revisions stored. */
  vaults: VaultsPort;
  credentials: CredentialsPort;
  /** The custody audit (who opened which credential for which run), read-only. */
  credentialOpens: Pick<CredentialOpenAudit, "list">;
  /** The admin audit (who changed which agent, environment, vault, credential or key), read-only. */
  adminAudit: AdminAuditReader;
  /** Which workers are alive and what runs they hold. */
  workers: WorkerRoster;
  /** When a workspace's sessions (and so its pending approvals) may have changed: the hint streams' source. */
  sessionChanges: SessionChangeFeed;
  stream: StreamDeps;
  /** The live view of a session every protocol's stream formats. */
  tail: SessionTail;
  /** The models the configured providers serve, and where each id is answered. */
  models: ModelCatalog;
  clock: Clock;
  /** Webhook push notifications (A2A): their durable outbox and the URL policy; absent, none. */
  push?: { store: PushOutboxStore; targets: WebhookTargets } | undefined;
  /** Webhook endpoints and the door events are enqueued through; absent, none (route-table tests). */
  webhooks?: WebhookService | undefined;
  /** Files, skills, memory stores and the resources sessions mount (the Resources context). */
  resources: ResourceServices;
  /** Deployments and their runs (the Deployment context); absent, its routes answer 404. */
  deployments?: DeploymentService | undefined;
  /** Dreams: memory stores reorganized by a model run over past sessions (the Dreams context). */
  dreams: DreamService;
  /**
   * What workspace quotas count (runs, sessions, committed usage) and the limits set per workspace
   * (null: none), for the usage route.
   */
  usage: { reader: QuotaUsageReader; limitsOf(workspaceId: string): WorkspaceLimits | null };
  /** MCP tunnels and their CA certificates (the Coordinator's; tokens sealed by Control's sealer). */
  tunnels: TunnelService;
  /** Data subjects: erasure of captured content (Coordinator) and consent per purpose (Control). */
  dataSubjects: { erasure: SubjectErasureService; consents: ConsentsPort };
  /** User profiles (Control's): the end customers a workspace serves, each a data subject. */
  userProfiles: UserProfilesPort;
}

/**
 * What Control's own door serves (`awaken control`): authoring, vaults and credentials, IAM, the
 * audits, consent and user profiles, all in Control's process. Everything else is the coordinator's.
 */
export type ControlEdgeServices = Pick<
  EdgeServices,
  "iam" | "agents" | "vaults" | "credentials" | "credentialOpens" | "adminAudit" | "clock" | "userProfiles"
> & { dataSubjects: Pick<EdgeServices["dataSubjects"], "consents"> };
