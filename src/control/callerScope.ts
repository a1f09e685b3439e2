/**
 * What a caller reaches inside its workspace and role: the agents an API key's allow-list names,
 * and, for an application access token, the operations it grants and the one session it may be
 * confined to. Pure decisions; the edges apply them where a request names an agent or a session.
 *
 * Outside the scope, an agent or a session is absent (the edges answer as for an unknown id: a
 * 404, never a 403 that would confirm the id exists); an operation the scope does not grant is a
 * 403 naming the operation.
 */
export const ACCESS_OPERATIONS = ["read", "send", "create"] as const;
/**
 * - `read`: a session's record, events, stream and history, the session list, the model list;
 * - `send`: input into a session (messages, tool results, approvals, interrupts);
 * - `create`: new sessions (never for a token confined to one session).
 * Updating, archiving and deleting sessions is `manage`, which only API keys hold.
 */
export type AccessOperation = (typeof ACCESS_OPERATIONS)[number];
export type SessionOperation = AccessOperation | "manage";

export interface CallerScope {
  /** Agent ids the caller may use; null: every agent of the workspace. */
  agentIds: readonly string[] | null;
  /** The one session an access token is confined to; null: any session of its agents. */
  sessionId: string | null;
  /** What an access token grants; null: everything its role allows (an API key). */
  operations: readonly AccessOperation[] | null;
}

export const UNSCOPED: CallerScope = Object.freeze({ agentIds: null, sessionId: null, operations: null });

export function isUnscoped(scope: CallerScope): boolean {
  return scope.agentIds === null && scope.sessionId === null && scope.operations === null;
}

export function isAccessOperation(value: unknown): value is AccessOperation {
  return typeof value === "string" && (ACCESS_OPERATIONS as readonly string[]).includes(value);
}

export function scopeGrants(scope: CallerScope, operation: SessionOperation): boolean {
  if (scope.operations === null) return true;
  return operation !== "manage" && scope.operations.includes(operation);
}

export function scopeReachesAgent(scope: CallerScope, agentId: string): boolean {
  return scope.agentIds === null || scope.agentIds.includes(agentId);
}

export function scopeReachesSession(scope: CallerScope, session: { id: string; agentId: string }): boolean {
  if (scope.sessionId !== null && scope.sessionId !== session.id) return false;
  return scopeReachesAgent(scope, session.agentId);
}

/** Whether the caller may start a new session of `agentId` (a confined token never may). */
export function scopeMayStart(scope: CallerScope, agentId: string): boolean {
  return scope.sessionId === null && scopeGrants(scope, "create") && scopeReachesAgent(scope, agentId);
}

/**
 * The scope of a token minted under `minter`: never wider. Agents are the intersection (a token
 * naming an agent outside the minter's list reaches none of it); operations and the session are
 * the token's own.
 */
export function narrowScope(
  minter: CallerScope,
  requested: {
    agentIds: readonly string[] | null;
    sessionId: string | null;
    operations: readonly AccessOperation[];
  },
): CallerScope {
  const agentIds =
    requested.agentIds === null
      ? minter.agentIds
      : minter.agentIds === null
        ? requested.agentIds
        : requested.agentIds.filter((id) => minter.agentIds?.includes(id));
  const operations =
    minter.operations === null
      ? requested.operations
      : requested.operations.filter((op) => minter.operations?.includes(op));
  return {
    agentIds,
    sessionId: minter.sessionId ?? requested.sessionId,
    operations,
  };
}

/** Agent ids as a client may name them in an allow-list: printable, no separators, bounded. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const MAX_ALLOWED_AGENTS = 64;

/** Validates an allow-list a client sent; returns the message to answer with, or null. */
export function allowListProblem(field: string, ids: readonly string[]): string | null {
  if (ids.length === 0) return `${field}: name at least one agent id, or leave it out for every agent.`;
  if (ids.length > MAX_ALLOWED_AGENTS) return `${field}: at most ${MAX_ALLOWED_AGENTS} agent ids.`;
  for (const [i, id] of ids.entries()) {
    if (!AGENT_ID.test(id))
      return `${field}[${i}]: expected an agent id (letters, digits, _ . : -, at most 128 characters).`;
  }
  return null;
}
