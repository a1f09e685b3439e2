/** The Console's pages by path below its root: pure, so the map is unit-tested without a browser. */

export type Route =
  | { page: "overview" }
  | { page: "sessions" }
  | { page: "session"; sessionId: string; threadId?: string }
  | { page: "approvals" }
  | { page: "agents" }
  | { page: "agent"; agentId: string }
  | { page: "environments" }
  | { page: "environment"; environmentId: string }
  | { page: "builds"; buildId?: string }
  | { page: "vaults" }
  | { page: "vault"; vaultId: string }
  | { page: "credential"; vaultId: string; credentialId: string }
  | { page: "files" }
  | { page: "skills" }
  | { page: "skill"; skillId: string; versionId?: string }
  | { page: "memory-stores" }
  | { page: "memory-store"; storeId: string; memoryId?: string }
  | { page: "deployments" }
  | { page: "deployment"; deploymentId: string }
  | { page: "custody" }
  | { page: "environment-keys" }
  | { page: "workers" }
  | { page: "audit" }
  | { page: "api-keys" }
  | { page: "webhooks" }
  | { page: "not_found"; path: string };

export function routeOf(path: string): Route {
  const parts = path.split("/").filter((part) => part !== "");
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "overview")) return { page: "overview" };
  if (parts.length === 1 && parts[0] === "sessions") return { page: "sessions" };
  if (parts.length === 1 && (parts[0] === "audit" || parts[0] === "api-keys")) return { page: parts[0] };
  if (parts.length === 2 && parts[0] === "sessions") return { page: "session", sessionId: parts[1]! };
  if (parts.length === 4 && parts[0] === "sessions" && parts[2] === "threads")
    return { page: "session", sessionId: parts[1]!, threadId: parts[3]! };
  if (parts.length === 2 && parts[0] === "agents") return { page: "agent", agentId: parts[1]! };
  if (parts.length === 2 && parts[0] === "vaults") return { page: "vault", vaultId: parts[1]! };
  if (parts.length === 1 && (parts[0] === "approvals" || parts[0] === "agents")) return { page: parts[0] };
  if (parts.length === 1 && (parts[0] === "environments" || parts[0] === "vaults")) return { page: parts[0] };
  if (parts.length === 4 && parts[0] === "vaults" && parts[2] === "credentials")
    return { page: "credential", vaultId: parts[1]!, credentialId: parts[3]! };
  if (parts.length === 1 && (parts[0] === "custody" || parts[0] === "workers")) return { page: parts[0] };
  if (parts.length === 1 && parts[0] === "environment-keys") return { page: "environment-keys" };
  if (parts.length === 1 && parts[0] === "webhooks") return { page: "webhooks" };
  if (parts.length === 2 && parts[0] === "environments")
    return { page: "environment", environmentId: parts[1]! };
  if (parts.length === 1 && parts[0] === "builds") return { page: "builds" };
  if (parts.length === 2 && parts[0] === "builds") return { page: "builds", buildId: parts[1]! };
  if (parts.length === 1 && (parts[0] === "files" || parts[0] === "skills" || parts[0] === "memory-stores"))
    return { page: parts[0] };
  if (parts.length === 2 && parts[0] === "skills") return { page: "skill", skillId: parts[1]! };
  if (parts.length === 4 && parts[0] === "skills" && parts[2] === "versions")
    return { page: "skill", skillId: parts[1]!, versionId: parts[3]! };
  if (parts.length === 1 && parts[0] === "deployments") return { page: "deployments" };
  if (parts.length === 2 && parts[0] === "deployments")
    return { page: "deployment", deploymentId: parts[1]! };
  if (parts.length === 2 && parts[0] === "memory-stores") return { page: "memory-store", storeId: parts[1]! };
  if (parts.length === 4 && parts[0] === "memory-stores" && parts[2] === "memories")
    return { page: "memory-store", storeId: parts[1]!, memoryId: parts[3]! };
  return { page: "not_found", path };
}
