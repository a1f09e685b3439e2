import * as adminAudit from "../managed-agents/schemas/adminAudit.js";
import * as agents from "../managed-agents/schemas/agents.js";
import * as apiKeys from "../managed-agents/schemas/apiKeys.js";
import * as custody from "../managed-agents/schemas/custody.js";
import * as dataSubjects from "../managed-agents/schemas/dataSubjects.js";
import * as deployments from "../managed-agents/schemas/deployments.js";
import * as dreams from "../managed-agents/schemas/dreams.js";
import * as environments from "../managed-agents/schemas/environments.js";
import * as events from "../managed-agents/schemas/events.js";
import * as files from "../managed-agents/schemas/files.js";
import * as imageBuilds from "../managed-agents/schemas/imageBuilds.js";
import * as memory from "../managed-agents/schemas/memoryStores.js";
import * as models from "../managed-agents/schemas/models.js";
import * as resourceUsage from "../managed-agents/schemas/resourceUsage.js";
import * as sessionOutcomes from "../managed-agents/schemas/sessionOutcomes.js";
import * as sessionResources from "../managed-agents/schemas/sessionResources.js";
import * as sessions from "../managed-agents/schemas/sessions.js";
import * as skills from "../managed-agents/schemas/skills.js";
import * as threads from "../managed-agents/schemas/threads.js";
import * as tunnels from "../managed-agents/schemas/tunnels.js";
import * as userProfiles from "../managed-agents/schemas/userProfiles.js";
import * as vaults from "../managed-agents/schemas/vaults.js";
import * as webhooks from "../managed-agents/schemas/webhooks.js";
import * as work from "../managed-agents/schemas/work.js";
import * as workers from "../managed-agents/schemas/workers.js";
import * as workspaceUsage from "../managed-agents/schemas/workspaceUsage.js";
import type { OperationSpec } from "./operationSpec.js";

const ENV_WORK = "/v1/environments/:environment_id/work";
const MEMORY_STORE = "/v1/memory_stores/:memory_store_id";
const DEPLOYMENT = "/v1/deployments/:deployment_id";
const CREDENTIAL = "/v1/vaults/:vault_id/credentials/:credential_id";
const THREAD = "/v1/sessions/:id/threads/:threadId";
const TUNNEL = "/v1/tunnels/:tunnel_id";
const USER_PROFILE = "/v1/user_profiles/:user_profile_id";
const WEBHOOK = "/v1/organizations/webhooks/:webhook_endpoint_id";
const WEBHOOK_DELIVERIES = "/v1/awaken/webhooks/:webhook_endpoint_id/deliveries";

/** The Managed Agents wire and Awaken's `/v1/awaken/` extensions, with the schemas their routes parse. */
export const MANAGED_OPERATIONS: readonly OperationSpec[] = [
  // Agents
  { method: "POST", path: "/v1/agents", summary: "Create an agent", body: agents.createAgentBodySchema },
  { method: "GET", path: "/v1/agents", summary: "List agents", query: agents.listAgentsQuerySchema },
  {
    method: "GET",
    path: "/v1/agents/:id",
    summary: "Retrieve an agent (a version of it)",
    query: agents.retrieveAgentQuerySchema,
  },
  {
    method: "POST",
    path: "/v1/agents/:id",
    summary: "Update an agent (publishes a version)",
    body: agents.updateAgentBodySchema,
  },
  { method: "POST", path: "/v1/agents/:id/archive", summary: "Archive an agent" },
  {
    method: "GET",
    path: "/v1/agents/:id/versions",
    summary: "List an agent's versions",
    query: agents.listAgentVersionsQuerySchema,
  },
  // Environments
  {
    method: "POST",
    path: "/v1/environments",
    summary: "Create an environment",
    body: environments.createEnvironmentBodySchema,
  },
  {
    method: "GET",
    path: "/v1/environments",
    summary: "List environments",
    query: environments.listEnvironmentsQuerySchema,
  },
  { method: "GET", path: "/v1/environments/:id", summary: "Retrieve an environment" },
  {
    method: "POST",
    path: "/v1/environments/:id",
    summary: "Update an environment",
    body: environments.updateEnvironmentBodySchema,
  },
  { method: "DELETE", path: "/v1/environments/:id", summary: "Delete an environment" },
  { method: "POST", path: "/v1/environments/:id/archive", summary: "Archive an environment" },
  // Self-hosted environments' work queue (environment keys)
  {
    method: "GET",
    path: `${ENV_WORK}/poll`,
    summary: "Poll for work (self-hosted environment)",
    query: work.pollWorkQuerySchema,
  },
  { method: "GET", path: `${ENV_WORK}/stats`, summary: "Work queue statistics" },
  { method: "GET", path: ENV_WORK, summary: "List work items", query: work.listWorkQuerySchema },
  { method: "GET", path: `${ENV_WORK}/:work_id`, summary: "Retrieve a work item" },
  {
    method: "POST",
    path: `${ENV_WORK}/:work_id`,
    summary: "Update a work item",
    body: work.updateWorkBodySchema,
  },
  { method: "POST", path: `${ENV_WORK}/:work_id/ack`, summary: "Acknowledge a work item" },
  {
    method: "POST",
    path: `${ENV_WORK}/:work_id/heartbeat`,
    summary: "Heartbeat a work item",
    query: work.heartbeatQuerySchema,
  },
  {
    method: "POST",
    path: `${ENV_WORK}/:work_id/stop`,
    summary: "Stop a work item",
    body: work.stopWorkBodySchema,
    bodyOptional: true,
  },
  // Sessions
  {
    method: "POST",
    path: "/v1/sessions",
    summary: "Create a session",
    body: sessions.createSessionBodySchema,
  },
  { method: "GET", path: "/v1/sessions", summary: "List sessions", query: sessions.listSessionsQuerySchema },
  { method: "GET", path: "/v1/sessions/:id", summary: "Retrieve a session" },
  {
    method: "POST",
    path: "/v1/sessions/:id",
    summary: "Update a session",
    body: sessions.updateSessionBodySchema,
  },
  { method: "DELETE", path: "/v1/sessions/:id", summary: "Delete a session" },
  { method: "POST", path: "/v1/sessions/:id/archive", summary: "Archive a session" },
  // Events
  {
    method: "POST",
    path: "/v1/sessions/:id/events",
    summary: "Send events to a session",
    body: events.sendEventsBodySchema,
  },
  {
    method: "GET",
    path: "/v1/sessions/:id/events",
    summary: "List a session's committed events",
    query: events.listEventsQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/sessions/:id/events/stream",
    summary: "Stream a session's events (server-sent events)",
    query: events.streamEventsQuerySchema,
    response: "sse",
  },
  // Threads
  {
    method: "GET",
    path: "/v1/sessions/:id/threads",
    summary: "List a session's threads",
    query: threads.listThreadsQuerySchema,
  },
  { method: "GET", path: THREAD, summary: "Retrieve a thread" },
  { method: "POST", path: `${THREAD}/archive`, summary: "Archive a thread" },
  {
    method: "GET",
    path: `${THREAD}/events`,
    summary: "List a thread's events",
    query: events.listEventsQuerySchema,
  },
  {
    method: "GET",
    path: `${THREAD}/stream`,
    summary: "Stream a thread's events (server-sent events)",
    query: events.streamEventsQuerySchema,
    response: "sse",
  },
  // Session resources
  {
    method: "POST",
    path: "/v1/sessions/:id/resources",
    summary: "Add a resource to a session",
    body: sessionResources.addSessionResourceBodySchema,
  },
  {
    method: "GET",
    path: "/v1/sessions/:id/resources",
    summary: "List a session's resources",
    query: sessionResources.listSessionResourcesQuerySchema,
  },
  { method: "GET", path: "/v1/sessions/:id/resources/:resource_id", summary: "Retrieve a session resource" },
  {
    method: "POST",
    path: "/v1/sessions/:id/resources/:resource_id",
    summary: "Update a session resource",
    body: sessionResources.updateSessionResourceBodySchema,
  },
  { method: "DELETE", path: "/v1/sessions/:id/resources/:resource_id", summary: "Remove a session resource" },
  // Vaults and credentials
  { method: "POST", path: "/v1/vaults", summary: "Create a vault", body: vaults.createVaultBodySchema },
  { method: "GET", path: "/v1/vaults", summary: "List vaults", query: vaults.listVaultsQuerySchema },
  { method: "GET", path: "/v1/vaults/:vault_id", summary: "Retrieve a vault" },
  {
    method: "POST",
    path: "/v1/vaults/:vault_id",
    summary: "Update a vault",
    body: vaults.updateVaultBodySchema,
  },
  { method: "DELETE", path: "/v1/vaults/:vault_id", summary: "Delete a vault" },
  { method: "POST", path: "/v1/vaults/:vault_id/archive", summary: "Archive a vault" },
  {
    method: "POST",
    path: "/v1/vaults/:vault_id/credentials",
    summary: "Create a credential",
    body: vaults.createCredentialBodySchema,
  },
  {
    method: "GET",
    path: "/v1/vaults/:vault_id/credentials",
    summary: "List credentials",
    query: vaults.listCredentialsQuerySchema,
  },
  { method: "GET", path: CREDENTIAL, summary: "Retrieve a credential (never its secret)" },
  {
    method: "POST",
    path: CREDENTIAL,
    summary: "Update a credential",
    body: vaults.updateCredentialBodySchema,
  },
  { method: "DELETE", path: CREDENTIAL, summary: "Delete a credential" },
  { method: "POST", path: `${CREDENTIAL}/archive`, summary: "Archive a credential" },
  { method: "POST", path: `${CREDENTIAL}/mcp_oauth_validate`, summary: "Validate an MCP OAuth credential" },
  // Models
  { method: "GET", path: "/v1/models", summary: "List models", query: models.listModelsQuerySchema },
  { method: "GET", path: "/v1/models/:model_id", summary: "Retrieve a model" },
  // Files
  { method: "POST", path: "/v1/files", summary: "Upload a file (multipart)", body: "multipart-file" },
  { method: "GET", path: "/v1/files", summary: "List files", query: files.listFilesQuerySchema },
  { method: "GET", path: "/v1/files/:file_id", summary: "Retrieve a file's metadata" },
  { method: "GET", path: "/v1/files/:file_id/content", summary: "Download a file", response: "binary" },
  { method: "DELETE", path: "/v1/files/:file_id", summary: "Delete a file" },
  // Skills
  {
    method: "POST",
    path: "/v1/skills",
    summary: "Create a skill (multipart bundle)",
    body: "multipart-skill",
  },
  { method: "GET", path: "/v1/skills", summary: "List skills", query: skills.listSkillsQuerySchema },
  { method: "GET", path: "/v1/skills/:skill_id", summary: "Retrieve a skill" },
  { method: "DELETE", path: "/v1/skills/:skill_id", summary: "Delete a skill" },
  {
    method: "POST",
    path: "/v1/skills/:skill_id/versions",
    summary: "Create a skill version (multipart bundle)",
    body: "multipart-skill",
  },
  {
    method: "GET",
    path: "/v1/skills/:skill_id/versions",
    summary: "List a skill's versions",
    query: skills.listSkillVersionsQuerySchema,
  },
  { method: "GET", path: "/v1/skills/:skill_id/versions/:version", summary: "Retrieve a skill version" },
  { method: "DELETE", path: "/v1/skills/:skill_id/versions/:version", summary: "Delete a skill version" },
  {
    method: "GET",
    path: "/v1/skills/:skill_id/versions/:version/content",
    summary: "Download a skill version's bundle",
    response: "binary",
  },
  // Deployments and their runs
  {
    method: "POST",
    path: "/v1/deployments",
    summary: "Create a deployment",
    body: deployments.createDeploymentBodySchema,
  },
  {
    method: "GET",
    path: "/v1/deployments",
    summary: "List deployments",
    query: deployments.listDeploymentsQuerySchema,
  },
  { method: "GET", path: DEPLOYMENT, summary: "Retrieve a deployment" },
  {
    method: "POST",
    path: DEPLOYMENT,
    summary: "Update a deployment",
    body: deployments.updateDeploymentBodySchema,
  },
  { method: "POST", path: `${DEPLOYMENT}/archive`, summary: "Archive a deployment" },
  { method: "POST", path: `${DEPLOYMENT}/pause`, summary: "Pause a deployment's schedule" },
  { method: "POST", path: `${DEPLOYMENT}/unpause`, summary: "Unpause a deployment's schedule" },
  { method: "POST", path: `${DEPLOYMENT}/run`, summary: "Run a deployment now (a manual run)" },
  {
    method: "GET",
    path: "/v1/deployment_runs",
    summary: "List deployment runs",
    query: deployments.listDeploymentRunsQuerySchema,
  },
  { method: "GET", path: "/v1/deployment_runs/:deployment_run_id", summary: "Retrieve a deployment run" },
  // MCP tunnels (admin only) and their CA certificates
  {
    method: "POST",
    path: "/v1/tunnels",
    summary: "Create an MCP tunnel",
    body: tunnels.createTunnelBodySchema,
    bodyOptional: true,
  },
  { method: "GET", path: "/v1/tunnels", summary: "List MCP tunnels", query: tunnels.listTunnelsQuerySchema },
  { method: "GET", path: TUNNEL, summary: "Retrieve an MCP tunnel" },
  {
    method: "POST",
    path: `${TUNNEL}/archive`,
    summary: "Archive an MCP tunnel (its certificates and token with it)",
    body: tunnels.emptyBodySchema,
    bodyOptional: true,
  },
  {
    method: "POST",
    path: `${TUNNEL}/reveal_token`,
    summary: "Reveal an MCP tunnel's connector token",
    body: tunnels.emptyBodySchema,
    bodyOptional: true,
  },
  {
    method: "POST",
    path: `${TUNNEL}/rotate_token`,
    summary: "Rotate an MCP tunnel's connector token",
    body: tunnels.rotateTunnelTokenBodySchema,
    bodyOptional: true,
  },
  {
    method: "POST",
    path: `${TUNNEL}/certificates`,
    summary: "Add a CA certificate to an MCP tunnel",
    body: tunnels.createTunnelCertificateBodySchema,
  },
  {
    method: "GET",
    path: `${TUNNEL}/certificates`,
    summary: "List an MCP tunnel's CA certificates",
    query: tunnels.listTunnelsQuerySchema,
  },
  {
    method: "GET",
    path: `${TUNNEL}/certificates/:certificate_id`,
    summary: "Retrieve a tunnel CA certificate",
  },
  {
    method: "POST",
    path: `${TUNNEL}/certificates/:certificate_id/archive`,
    summary: "Archive a tunnel CA certificate",
    body: tunnels.emptyBodySchema,
    bodyOptional: true,
  },
  // Memory stores
  {
    method: "POST",
    path: "/v1/memory_stores",
    summary: "Create a memory store",
    body: memory.createMemoryStoreBodySchema,
  },
  {
    method: "GET",
    path: "/v1/memory_stores",
    summary: "List memory stores",
    query: memory.listMemoryStoresQuerySchema,
  },
  { method: "GET", path: MEMORY_STORE, summary: "Retrieve a memory store" },
  {
    method: "POST",
    path: MEMORY_STORE,
    summary: "Update a memory store",
    body: memory.updateMemoryStoreBodySchema,
  },
  { method: "DELETE", path: MEMORY_STORE, summary: "Delete a memory store" },
  { method: "POST", path: `${MEMORY_STORE}/archive`, summary: "Archive a memory store" },
  {
    method: "POST",
    path: `${MEMORY_STORE}/memories`,
    summary: "Create a memory",
    body: memory.createMemoryBodySchema,
    query: memory.viewQuerySchema,
  },
  {
    method: "GET",
    path: `${MEMORY_STORE}/memories`,
    summary: "List memories",
    query: memory.listMemoriesQuerySchema,
  },
  {
    method: "GET",
    path: `${MEMORY_STORE}/memories/:memory_id`,
    summary: "Retrieve a memory",
    query: memory.viewQuerySchema,
  },
  {
    method: "POST",
    path: `${MEMORY_STORE}/memories/:memory_id`,
    summary: "Update a memory",
    body: memory.updateMemoryBodySchema,
    query: memory.viewQuerySchema,
  },
  {
    method: "DELETE",
    path: `${MEMORY_STORE}/memories/:memory_id`,
    summary: "Delete a memory",
    query: memory.deleteMemoryQuerySchema,
  },
  {
    method: "GET",
    path: `${MEMORY_STORE}/memory_versions`,
    summary: "List memory versions",
    query: memory.listMemoryVersionsQuerySchema,
  },
  {
    method: "GET",
    path: `${MEMORY_STORE}/memory_versions/:memory_version_id`,
    summary: "Retrieve a memory version",
    query: memory.viewQuerySchema,
  },
  {
    method: "POST",
    path: `${MEMORY_STORE}/memory_versions/:memory_version_id/redact`,
    summary: "Redact a memory version",
  },
  // Dreams
  { method: "POST", path: "/v1/dreams", summary: "Create a dream", body: dreams.createDreamBodySchema },
  { method: "GET", path: "/v1/dreams", summary: "List dreams", query: dreams.listDreamsQuerySchema },
  { method: "GET", path: "/v1/dreams/:dream_id", summary: "Retrieve a dream" },
  { method: "POST", path: "/v1/dreams/:dream_id/cancel", summary: "Cancel a dream" },
  { method: "POST", path: "/v1/dreams/:dream_id/archive", summary: "Archive a dream" },
  // Awaken extensions
  {
    method: "POST",
    path: "/v1/awaken/api_keys",
    summary: "Create an API key",
    body: apiKeys.createApiKeyBodySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/api_keys",
    summary: "List API keys",
    query: apiKeys.listApiKeysQuerySchema,
  },
  { method: "POST", path: "/v1/awaken/api_keys/:key_id/revoke", summary: "Revoke an API key" },
  {
    method: "POST",
    path: "/v1/awaken/access_tokens",
    summary: "Mint a short-lived access token",
    body: apiKeys.createAccessTokenBodySchema,
    bodyOptional: true,
  },
  {
    method: "POST",
    path: "/v1/awaken/environments/:environment_id/keys",
    summary: "Create a self-hosted environment key",
    body: work.createEnvironmentKeyBodySchema,
    bodyOptional: true,
  },
  {
    method: "GET",
    path: "/v1/awaken/environments/:environment_id/keys",
    summary: "List a self-hosted environment's keys",
    query: work.listEnvironmentKeysQuerySchema,
  },
  {
    method: "POST",
    path: "/v1/awaken/environments/:environment_id/keys/:key_id/revoke",
    summary: "Revoke an environment key",
  },
  {
    method: "POST",
    path: "/v1/awaken/environments/:environment_id/image/rebuild",
    summary: "Retry the failed container image build of an environment's current revision",
  },
  {
    method: "GET",
    path: "/v1/awaken/image_builds",
    summary: "List the container image builds the workspace's environments run",
    query: imageBuilds.listImageBuildsQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/vaults/:vault_id/credentials/:credential_id/revisions",
    summary: "List a credential's revisions (secret-free)",
    query: custody.listCredentialRevisionsQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/credential_opens",
    summary: "The workspace's credential custody audit",
    query: custody.listCredentialOpensQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/audit",
    summary: "The admin audit",
    query: adminAudit.listAdminAuditQuerySchema,
  },
  {
    method: "POST",
    path: "/v1/awaken/data_subjects/:subject_id/erasure",
    summary: "Erase a data subject's content",
    body: dataSubjects.eraseBodySchema,
    bodyOptional: true,
  },
  {
    method: "GET",
    path: "/v1/awaken/data_subjects/:subject_id/erasures",
    summary: "List a data subject's erasures",
  },
  {
    method: "GET",
    path: "/v1/awaken/data_subjects/:subject_id/consents",
    summary: "List a data subject's consents",
  },
  {
    method: "PUT",
    path: "/v1/awaken/data_subjects/:subject_id/consents/:purpose",
    summary: "Grant or withdraw a data subject's consent",
    body: dataSubjects.setConsentBodySchema,
  },
  // User profiles (the same paths serve the SDK's GA and beta clients; the beta header picks the shape)
  {
    method: "POST",
    path: "/v1/user_profiles",
    summary: "Create a user profile",
    body: userProfiles.createUserProfileBodySchema,
  },
  {
    method: "GET",
    path: "/v1/user_profiles",
    summary: "List user profiles",
    query: userProfiles.userProfileListQuerySchema,
  },
  { method: "GET", path: USER_PROFILE, summary: "Retrieve a user profile" },
  {
    method: "POST",
    path: USER_PROFILE,
    summary: "Update a user profile",
    body: userProfiles.updateUserProfileBodySchema,
  },
  { method: "DELETE", path: USER_PROFILE, summary: "Delete a user profile (erases its captured content)" },
  {
    method: "POST",
    path: `${USER_PROFILE}/action_urls`,
    summary: "Create a user profile's action URL",
    body: userProfiles.actionUrlBodySchema,
  },
  {
    method: "POST",
    path: `${USER_PROFILE}/enrollment_url`,
    summary: "Create a user profile's enrollment URL (beta; recorded only)",
    body: userProfiles.emptyBodySchema,
    bodyOptional: true,
  },
  {
    method: "GET",
    path: `${USER_PROFILE}/providers/google/data_controls`,
    summary: "A user profile's Google data controls (beta; recorded only)",
  },
  {
    method: "POST",
    path: `${USER_PROFILE}/providers/google/data_controls`,
    summary: "Update a user profile's Google data controls (beta; recorded only)",
    body: userProfiles.dataControlsBodySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/workers",
    summary: "The workers and what they hold",
    query: workers.workerRosterQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/sessions/stream",
    summary: "Hints that the workspace's sessions changed (server-sent events)",
    query: workers.sessionHintsQuerySchema,
    response: "sse",
  },
  {
    method: "GET",
    path: "/v1/awaken/approvals/stream",
    summary: "Hints that pending approvals changed (server-sent events)",
    query: workers.sessionHintsQuerySchema,
    response: "sse",
  },
  {
    method: "GET",
    path: "/v1/awaken/sessions/:session_id/resource_usage",
    summary: "What each run of a session used",
    query: resourceUsage.listResourceUsageQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/sessions/:session_id/harness",
    summary: "The launch stages of a session's ACP harness Brain",
  },
  {
    method: "GET",
    path: "/v1/awaken/sessions/outcomes",
    summary: "How each listed session's last run ended",
    query: sessionOutcomes.sessionOutcomesQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/overview",
    summary: "Runs, latency and tokens of the caller's sessions over the last 24 h",
    query: sessionOutcomes.overviewQuerySchema,
  },
  {
    method: "GET",
    path: "/v1/awaken/usage",
    summary: "The workspace's usage per day and now, beside its quotas",
    query: workspaceUsage.workspaceUsageQuerySchema,
  },
  // Webhook endpoints (scoped to the admin key's workspace) and the Awaken deliveries extension
  {
    method: "POST",
    path: "/v1/organizations/webhooks",
    summary: "Create a webhook endpoint (the answer holds its signing secret, once)",
    body: webhooks.createWebhookBodySchema,
  },
  {
    method: "GET",
    path: "/v1/organizations/webhooks",
    summary: "List the workspace's webhook endpoints",
    query: webhooks.listWebhooksQuerySchema,
  },
  { method: "GET", path: WEBHOOK, summary: "Retrieve a webhook endpoint" },
  {
    method: "POST",
    path: WEBHOOK,
    summary: "Update a webhook endpoint",
    body: webhooks.updateWebhookBodySchema,
  },
  { method: "DELETE", path: WEBHOOK, summary: "Delete a webhook endpoint" },
  {
    method: "POST",
    path: `${WEBHOOK}/regenerate_signing_secret`,
    summary: "Replace a webhook endpoint's signing secret (the answer holds the new one, once)",
  },
  {
    method: "GET",
    path: WEBHOOK_DELIVERIES,
    summary: "List a webhook endpoint's deliveries, dead-lettered (abandoned) ones included",
    query: webhooks.listDeliveriesQuerySchema,
  },
  {
    method: "POST",
    path: `${WEBHOOK_DELIVERIES}/:delivery_id/redeliver`,
    summary: "Deliver a delivery again, with the same webhook-id",
  },
];
