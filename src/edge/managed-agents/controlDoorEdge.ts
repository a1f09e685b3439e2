import type { EdgeAdapter } from "../http/edgeAdapter.js";
import type { ControlEdgeServices } from "../http/edgeServices.js";
import { answerManagedError } from "./errorEnvelope.js";
import { managedRoleFor } from "./routeRoles.js";
import { accessTokenRoutes } from "./routes/accessTokenRoutes.js";
import { adminAuditRoutes } from "./routes/adminAuditRoutes.js";
import { agentRoutes } from "./routes/agentRoutes.js";
import { apiKeyRoutes } from "./routes/apiKeyRoutes.js";
import { custodyRoutes } from "./routes/custodyRoutes.js";
import { consentRoutes } from "./routes/dataSubjectRoutes.js";
import { userProfileRoutes } from "./routes/userProfileRoutes.js";
import { vaultRoutes } from "./routes/vaultRoutes.js";

/**
 * Control's own door (`awaken control --api-port`): the operator routes of the Managed wire that
 * Control owns — agents (authoring and publication), vaults and credentials, API keys, access
 * tokens, the admin and custody audits, consent, user profiles — with the same paths, auth, roles and error
 * envelope as the coordinator, which forwards the same calls over the link. An operator reaches
 * them while every coordinator is down; publications made then register once one is back.
 */
export const controlDoorEdge: EdgeAdapter<ControlEdgeServices> = {
  name: "managed-agents",
  pathPrefixes: ["/"],
  register(app, services) {
    agentRoutes(app, services);
    vaultRoutes(app, services);
    apiKeyRoutes(app, services);
    accessTokenRoutes(app, services);
    adminAuditRoutes(app, services);
    custodyRoutes(app, services);
    consentRoutes(app, services);
    // A profile's delete erases content the coordinator holds: this door refuses it (400).
    userProfileRoutes(app, services);
  },
  roleFor: managedRoleFor,
  answerError: answerManagedError,
};
