import type { EdgeAdapter } from "../http/edgeAdapter.js";
import { answerManagedError } from "./errorEnvelope.js";
import { registerMultipartUploads } from "./multipartUploads.js";
import { managedRoleFor } from "./routeRoles.js";
import { accessTokenRoutes } from "./routes/accessTokenRoutes.js";
import { adminAuditRoutes } from "./routes/adminAuditRoutes.js";
import { agentRoutes } from "./routes/agentRoutes.js";
import { apiKeyRoutes } from "./routes/apiKeyRoutes.js";
import { custodyRoutes } from "./routes/custodyRoutes.js";
import { dataSubjectRoutes } from "./routes/dataSubjectRoutes.js";
import { deploymentRoutes } from "./routes/deploymentRoutes.js";
import { dreamRoutes } from "./routes/dreamRoutes.js";
import { environmentKeyRoutes } from "./routes/environmentKeyRoutes.js";
import { environmentRoutes } from "./routes/environmentRoutes.js";
import { eventRoutes } from "./routes/eventRoutes.js";
import { fileRoutes } from "./routes/fileRoutes.js";
import { harnessStageRoutes } from "./routes/harnessStageRoutes.js";
import { imageBuildRoutes } from "./routes/imageBuildRoutes.js";
import { memoryStoreRoutes } from "./routes/memoryStoreRoutes.js";
import { modelRoutes } from "./routes/modelRoutes.js";
import { overviewRoutes } from "./routes/overviewRoutes.js";
import { resourceUsageRoutes } from "./routes/resourceUsageRoutes.js";
import { sessionHintRoutes } from "./routes/sessionHintRoutes.js";
import { sessionOutcomeRoutes } from "./routes/sessionOutcomeRoutes.js";
import { sessionResourceRoutes } from "./routes/sessionResourceRoutes.js";
import { sessionRoutes } from "./routes/sessionRoutes.js";
import { skillRoutes } from "./routes/skillRoutes.js";
import { threadRoutes } from "./routes/threadRoutes.js";
import { tunnelRoutes } from "./routes/tunnelRoutes.js";
import { userProfileRoutes } from "./routes/userProfileRoutes.js";
import { vaultRoutes } from "./routes/vaultRoutes.js";
import { webhookRoutes } from "./routes/webhookRoutes.js";
import { workerRoutes } from "./routes/workerRoutes.js";
import { workRoutes } from "./routes/workRoutes.js";
import { workspaceUsageRoutes } from "./routes/workspaceUsageRoutes.js";
import { emitWebhookEvents } from "./webhookEmission.js";

/**
 * The Managed Agents wire (what `@anthropic-ai/sdk` speaks), plus Awaken's extensions under
 * `/v1/awaken/` (keys, custody, workers, the session hint streams). It owns `/v1/` but for the
 * prefixes of other adapters, so an unknown path answers in its envelope.
 */
export const managedAgentsEdge: EdgeAdapter = {
  name: "managed-agents",
  pathPrefixes: ["/"],
  register(app, services) {
    registerMultipartUploads(app);
    // Resource changes answered here are webhook events (read per request: route-table tests have none).
    emitWebhookEvents(app, () => services.webhooks);
    agentRoutes(app, services);
    environmentRoutes(app, services);
    imageBuildRoutes(app, services);
    sessionRoutes(app, services);
    eventRoutes(app, services);
    threadRoutes(app, services);
    workRoutes(app, services);
    environmentKeyRoutes(app, services);
    vaultRoutes(app, services);
    modelRoutes(app, services);
    apiKeyRoutes(app, services);
    custodyRoutes(app, services);
    adminAuditRoutes(app, services);
    dataSubjectRoutes(app, services);
    userProfileRoutes(app, services);
    workerRoutes(app, services);
    sessionHintRoutes(app, services);
    accessTokenRoutes(app, services);
    fileRoutes(app, services);
    skillRoutes(app, services);
    memoryStoreRoutes(app, services);
    deploymentRoutes(app, services);
    dreamRoutes(app, services);
    sessionResourceRoutes(app, services);
    resourceUsageRoutes(app, services);
    harnessStageRoutes(app, services);
    sessionOutcomeRoutes(app, services);
    overviewRoutes(app, services);
    workspaceUsageRoutes(app, services);
    tunnelRoutes(app, services);
    webhookRoutes(app, services);
  },
  roleFor: managedRoleFor,
  answerError: answerManagedError,
};
