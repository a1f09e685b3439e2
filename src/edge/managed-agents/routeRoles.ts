import type { FastifyRequest } from "fastify";
import type { ApiKeyRole } from "../../control/apiKeyRoles.js";

/** By route pattern prefix, the least role a Managed route needs; the first match wins. */
const ROLE_BY_PREFIX: ReadonlyArray<readonly [string, ApiKeyRole]> = [
  ["/v1/sessions", "runtime"],
  ["/v1/models", "runtime"],
  ["/v1/agents", "builder"],
  // Environments and their self-hosted work queue (an environment key skips roles: it is no API key).
  ["/v1/environments", "builder"],
  ["/v1/vaults", "builder"],
  // Resources: files and memory are what a session works on; skills are authored like agents.
  ["/v1/files", "runtime"],
  ["/v1/memory_stores", "runtime"],
  ["/v1/skills", "builder"],
  // Deployments are authored like agents (a schedule starts sessions unattended); their runs are
  // records of sessions started, readable by whoever may read sessions.
  ["/v1/deployments", "builder"],
  ["/v1/deployment_runs", "runtime"],
  // Dreams read the workspace's sessions and write a new memory store: runtime, like both of those
  // (a key limited to some agents, or an access token, is refused by the routes themselves).
  ["/v1/dreams", "runtime"],
  // User profiles are data subjects whose delete erases content, as the erasure route does: admins.
  ["/v1/user_profiles", "admin"],
  // The hint streams (no data): whoever may read the sessions may hear that they changed.
  ["/v1/awaken/sessions/stream", "runtime"],
  ["/v1/awaken/approvals/stream", "runtime"],
  // What each run of a session saw: whoever may read the session may read its runs' records.
  ["/v1/awaken/sessions/:session_id/resource_usage", "runtime"],
  ["/v1/awaken/sessions/:session_id/harness", "runtime"],
  // How a session's last run ended, and the Console's overview: read models of the sessions the caller reaches.
  ["/v1/awaken/sessions/outcomes", "runtime"],
  ["/v1/awaken/overview", "runtime"],
  // A backend with any key mints access tokens within its own reach (never wider).
  ["/v1/awaken/access_tokens", "runtime"],
  // The admin audit: who changed what in the workspace, for its admins only.
  ["/v1/awaken/audit", "admin"],
  // Erasure and consent of data subjects: the workspace's operators only.
  ["/v1/awaken/data_subjects", "admin"],
  // MCP tunnels: a connector token opens a path into a private network and the CA certificates
  // decide what is trusted there, so minting, revealing and trusting are an admin's. A builder
  // uses a tunnel by naming its domain in an agent's MCP server URL, without reading the token.
  ["/v1/tunnels", "admin"],
  ["/v1/awaken/", "admin"],
];

/** A route this table does not name needs an admin key: a new route fails closed until it is placed here. */
export function managedRouteRole(routePattern: string): ApiKeyRole {
  for (const [prefix, role] of ROLE_BY_PREFIX) {
    if (routePattern === prefix || routePattern.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`))
      return role;
  }
  return "admin";
}

export const managedRoleFor = (request: FastifyRequest): ApiKeyRole =>
  managedRouteRole(request.routeOptions.url ?? request.url);
