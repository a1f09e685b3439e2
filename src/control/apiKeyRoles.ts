/**
 * What an API key may do. Each role includes the ones below it:
 * - `runtime`: sessions, their events and streams, on every protocol edge, and the model list;
 * - `builder`: also authoring and publishing (agents, environments, vaults and credentials);
 * - `admin`: also the workspace's keys (API keys, environment keys).
 */
export const API_KEY_ROLES = ["runtime", "builder", "admin"] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

export function isApiKeyRole(value: unknown): value is ApiKeyRole {
  return typeof value === "string" && (API_KEY_ROLES as readonly string[]).includes(value);
}

/** Whether a key of `role` may do what needs `needed`. */
export function roleIncludes(role: ApiKeyRole, needed: ApiKeyRole): boolean {
  return API_KEY_ROLES.indexOf(role) >= API_KEY_ROLES.indexOf(needed);
}
