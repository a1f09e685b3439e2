/**
 * What a caller reaches inside its workspace and role: the agents an API key's allow-list names,
 * and, for an application access token, the operations it grants and the one session or the
 * session namespace (a prefix of client session names) it may be confined to. Pure decisions; the
 * edges apply them where a request names an agent or a session.
 *
 * Outside the scope, an agent or a session is absent (the edges answer as for an unknown id: a
 * 404, never a 403 that would confirm the id exists); an operation the scope does not grant is a
 * 403 naming the operation.
 */
export const ACCESS_OPERATIONS = ["read", "send", "create"] as const;
/**
 * - `read`: a session's record, events, stream and history, the session list, the model list;
 * - `send`: input into a session (messages, tool results, approvals, interrupts);
 * - `create`: new sessions (never for a token confined to one session; for a token confined to a
 *   namespace, only under a client name inside it).
 * Updating, archiving and deleting sessions is `manage`, which only API keys hold.
 */
export type AccessOperation = (typeof ACCESS_OPERATIONS)[number];
export type SessionOperation = AccessOperation | "manage";

export interface CallerScope {
  /** Agent ids the caller may use; null: every agent of the workspace. */
  agentIds: readonly string[] | null;
  /** The one session an access token is confined to; null: any session of its agents. */
  sessionId: string | null;
  /**
   * The prefix of the client session names (an AI SDK chat id, an AG-UI thread id) an access token
   * is confined to: it reaches only sessions bound to a name that starts with it, and creates only
   * under such a name. null: no such bound.
   */
  sessionNamespace: string | null;
  /** What an access token grants; null: everything its role allows (an API key). */
  operations: readonly AccessOperation[] | null;
}

export const UNSCOPED: CallerScope = Object.freeze({
  agentIds: null,
  sessionId: null,
  sessionNamespace: null,
  operations: null,
});

export function isUnscoped(scope: CallerScope): boolean {
  return (
    scope.agentIds === null &&
    scope.sessionId === null &&
    scope.sessionNamespace === null &&
    scope.operations === null
  );
}

/** Session ids start so; a session id is never a client name, so it is in no namespace. */
const SESSION_ID_PREFIX = "sesn_";

/** Whether `name` (a client session name, or a session id) is inside the scope's namespace. */
export function scopeNamesInNamespace(scope: CallerScope, name: string): boolean {
  const namespace = scope.sessionNamespace;
  if (namespace === null) return true;
  return !name.startsWith(SESSION_ID_PREFIX) && name.startsWith(namespace);
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

/**
 * Whether the caller reaches a session. `names` are the client names bound to it, needed only when
 * the scope has a namespace: then one of them must be inside it (absent or empty: none is).
 */
export function scopeReachesSession(
  scope: CallerScope,
  session: { id: string; agentId: string; names?: readonly string[] },
): boolean {
  if (scope.sessionId !== null && scope.sessionId !== session.id) return false;
  if (
    scope.sessionNamespace !== null &&
    !(session.names ?? []).some((name) => scopeNamesInNamespace(scope, name))
  )
    return false;
  return scopeReachesAgent(scope, session.agentId);
}

/**
 * Whether the caller may start a new session of `agentId`, bound to the client name `name` when
 * one is given: a token confined to one session never may; one confined to a namespace only under
 * a name inside it.
 */
export function scopeMayStart(scope: CallerScope, agentId: string, name?: string): boolean {
  if (scope.sessionId !== null || !scopeGrants(scope, "create") || !scopeReachesAgent(scope, agentId))
    return false;
  return scope.sessionNamespace === null || (name !== undefined && scopeNamesInNamespace(scope, name));
}

/**
 * The scope of a token minted under `minter`: never wider. Agents are the intersection (a token
 * naming an agent outside the minter's list reaches none of it); operations, the session and the
 * namespace are the token's own, within the minter's (two namespaces neither of which contains the
 * other share no name, so such a token reaches no agent).
 */
export function narrowScope(
  minter: CallerScope,
  requested: {
    agentIds: readonly string[] | null;
    sessionId: string | null;
    sessionNamespace?: string | null;
    operations: readonly AccessOperation[];
  },
): CallerScope {
  const wanted = requested.sessionNamespace ?? null;
  const held = minter.sessionNamespace;
  const sessionNamespace =
    held === null ? wanted : wanted === null || held.startsWith(wanted) ? held : wanted;
  const disjoint = held !== null && wanted !== null && !held.startsWith(wanted) && !wanted.startsWith(held);
  const agentIds = disjoint
    ? []
    : requested.agentIds === null
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
    sessionNamespace,
    operations,
  };
}

export const SESSION_NAMESPACE_MAX_CHARS = 128;
/** Printable ASCII without whitespace: a prefix compared byte for byte, shown and logged as typed. */
const SESSION_NAMESPACE = /^[\x21-\x7e]+$/;

/** Validates a session namespace a client sent; returns the message to answer with, or null. */
export function sessionNamespaceProblem(field: string, namespace: string): string | null {
  if (namespace.length > SESSION_NAMESPACE_MAX_CHARS || !SESSION_NAMESPACE.test(namespace))
    return `${field}: expected 1-${SESSION_NAMESPACE_MAX_CHARS} printable ASCII characters without spaces, such as "user-42/".`;
  if (namespace.startsWith(SESSION_ID_PREFIX))
    return `${field}: must not start with "${SESSION_ID_PREFIX}" (session ids do; they are never client names): choose a prefix such as "user-42/".`;
  return null;
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
