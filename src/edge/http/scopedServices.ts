import type { FastifyRequest } from "fastify";
import {
  type CallerScope,
  isUnscoped,
  type SessionOperation,
  scopeGrants,
  scopeMayStart,
  scopeNamesInNamespace,
  scopeReachesAgent,
  scopeReachesSession,
} from "../../control/callerScope.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { SessionEntry } from "../../coordinator/sessionEntry.js";
import { isSessionId } from "../../coordinator/sessionEntryNames.js";
import { AwakenError, notFound } from "../../kernel/errors.js";
import { type AuthPrincipal, principalOf } from "./auth.js";
import type { EdgeServices } from "./edgeServices.js";

/** The scope a request acts under: an API key's (or access token's); other principals have their own bounds. */
export function scopeOfPrincipal(principal: AuthPrincipal): CallerScope | null {
  return principal.kind === "api_key" && !isUnscoped(principal.scope) ? principal.scope : null;
}

/**
 * The services an edge calls for one request, narrowed to the caller's scope: an agent or a
 * session outside it is not found (as an unknown id would be), an operation it does not grant is a
 * 403. Every edge resolves agents and sessions through these, so one place decides for all of them.
 * An unscoped caller gets the services themselves.
 */
export function scopedServices<S extends EdgeServices>(services: S, principal: AuthPrincipal): S {
  const scope = scopeOfPrincipal(principal);
  if (scope === null) return services;
  return {
    ...services,
    agents: scopedAgents(services.agents, scope),
    sessions: scopedSessions(services.sessions, services.entry, scope),
    entry: scopedEntry(services.entry, scope),
  };
}

function refuseOperation(scope: CallerScope, operation: SessionOperation): void {
  if (scopeGrants(scope, operation)) return;
  const granted = scope.operations?.length ? scope.operations.join(", ") : "nothing";
  throw new AwakenError(
    "permission_denied",
    operation === "manage"
      ? "An access token cannot update, archive or delete sessions; an API key of the application's backend can."
      : `This access token does not grant "${operation}" (it grants ${granted}); mint one that does.`,
  );
}

function refuseStart(scope: CallerScope, agentId: string, name?: string): void {
  if (!scopeReachesAgent(scope, agentId)) throw notFound("agent", agentId);
  // A token confined to one session reaches no other, existing or new.
  if (scope.sessionId !== null) throw notFound("session", name ?? agentId);
  // A name outside a token's namespace is not found, as an agent outside its list is: whether a
  // session is bound to that name or not, the answer is the same (a 403 for a free name beside a
  // 404 for a bound one would tell the token which names other clients use).
  if (name !== undefined && !scopeNamesInNamespace(scope, name)) throw notFound("session", name);
  refuseOperation(scope, "create");
  if (scope.sessionNamespace !== null && name === undefined) {
    throw new AwakenError(
      "permission_denied",
      `This access token is confined to session names starting with ${JSON.stringify(scope.sessionNamespace)}: ` +
        "it creates sessions only under such a name (an AI SDK chat id, an AG-UI thread id), never an unnamed one.",
    );
  }
  if (!scopeMayStart(scope, agentId, name)) throw notFound("agent", agentId);
}

/**
 * Whether the scope reaches a session. A token confined to a namespace needs the session's client
 * names: `via`, the name the request found it by (bound to it), or else one indexed read.
 */
async function reaches(
  scope: CallerScope,
  entry: SessionEntry,
  session: SessionRecord,
  via?: string,
): Promise<boolean> {
  const names =
    scope.sessionNamespace === null
      ? []
      : via !== undefined && !isSessionId(via)
        ? [via]
        : await entry.namesOf(session.workspaceId, session.id);
  return scopeReachesSession(scope, { id: session.id, agentId: session.agent.agentId, names });
}

/** `session` if the scope reaches it, else not found as `asked` (the id or name the request gave). */
async function reached(
  scope: CallerScope,
  entry: SessionEntry,
  session: SessionRecord,
  asked: string,
  via?: string,
): Promise<SessionRecord> {
  if (!(await reaches(scope, entry, session, via))) throw notFound("session", asked);
  return session;
}

async function visible(
  scope: CallerScope,
  entry: SessionEntry,
  session: SessionRecord | null,
  via?: string,
): Promise<SessionRecord | null> {
  return session && (await reaches(scope, entry, session, via)) ? session : null;
}

/** `inner` with some methods replaced; the others are inner's own, bound to it. */
function withOverrides<T extends object>(inner: T, overrides: Partial<T>): T {
  return new Proxy(inner, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function scopedAgents(agents: EdgeServices["agents"], scope: CallerScope): EdgeServices["agents"] {
  return withOverrides(agents, {
    retrieve: async (workspaceId, agentId, version) => {
      if (!scopeReachesAgent(scope, agentId)) throw notFound("agent", agentId);
      return agents.retrieve(workspaceId, agentId, version);
    },
    list: async (workspaceId, query) => {
      const page = await agents.list(workspaceId, query);
      return { ...page, data: page.data.filter((view) => scopeReachesAgent(scope, view.head.id)) };
    },
  });
}

function scopedSessions(
  sessions: EdgeServices["sessions"],
  entry: SessionEntry,
  scope: CallerScope,
): EdgeServices["sessions"] {
  const check = async (workspaceId: string, id: string, operation: SessionOperation) => {
    refuseOperation(scope, operation);
    return reached(scope, entry, await sessions.get(workspaceId, id), id);
  };
  return withOverrides(sessions, {
    create: async (cmd) => {
      refuseStart(scope, cmd.agent.agentId);
      return sessions.create(cmd);
    },
    get: (workspaceId, id) => check(workspaceId, id, "read"),
    getForStream: async (workspaceId, id) => {
      refuseOperation(scope, "read");
      const found = await sessions.getForStream(workspaceId, id);
      await reached(scope, entry, found.session, id);
      return found;
    },
    list: async (workspaceId, query) => {
      refuseOperation(scope, "read");
      if (query.agentId !== undefined && !scopeReachesAgent(scope, query.agentId))
        return { data: [], nextCursor: null, prevCursor: null };
      return sessions.list(workspaceId, {
        ...query,
        ...(scope.agentIds !== null ? { agentIds: scope.agentIds } : {}),
        ...(scope.sessionId !== null ? { ids: [scope.sessionId] } : {}),
        ...(scope.sessionNamespace !== null ? { namePrefix: scope.sessionNamespace } : {}),
      });
    },
    send: async (workspaceId, id, inputs, options) => {
      await check(workspaceId, id, "send");
      return sessions.send(workspaceId, id, inputs, options);
    },
    repeatedSend: async (workspaceId, id, key, windowMs) => {
      await check(workspaceId, id, "send");
      return sessions.repeatedSend(workspaceId, id, key, windowMs);
    },
    update: async (workspaceId, id, cmd) => {
      await check(workspaceId, id, "manage");
      return sessions.update(workspaceId, id, cmd);
    },
    archive: async (workspaceId, id) => {
      await check(workspaceId, id, "manage");
      return sessions.archive(workspaceId, id);
    },
    listThreads: async (workspaceId, id, query) => {
      await check(workspaceId, id, "read");
      return sessions.listThreads(workspaceId, id, query);
    },
    getThread: async (workspaceId, id, threadId) => {
      await check(workspaceId, id, "read");
      return sessions.getThread(workspaceId, id, threadId);
    },
    archiveThread: async (workspaceId, id, threadId) => {
      await check(workspaceId, id, "manage");
      return sessions.archiveThread(workspaceId, id, threadId);
    },
    delete: async (workspaceId, id) => {
      await check(workspaceId, id, "manage");
      return sessions.delete(workspaceId, id);
    },
  });
}

function scopedEntry(entry: SessionEntry, scope: CallerScope): SessionEntry {
  return {
    start: async (cmd) => {
      refuseStart(scope, cmd.agent.id);
      return entry.start(cmd);
    },
    findNamed: async (workspaceId, name) => {
      refuseOperation(scope, "read");
      return visible(scope, entry, await entry.findNamed(workspaceId, name), name);
    },
    openNamed: async (workspaceId, name, cmd) => {
      refuseOperation(scope, "read");
      const existing = await entry.findNamed(workspaceId, name);
      if (existing) return reached(scope, entry, existing, name, name);
      refuseStart(scope, cmd.agent.id, name);
      // Another request may bind the name first; its session must be in scope too.
      return reached(scope, entry, await entry.openNamed(workspaceId, name, cmd), name, name);
    },
    openKeyed: async (workspaceId, space, key, windowMs, cmd) => {
      refuseOperation(scope, "read");
      const existing = await entry.findKeyed(workspaceId, space, key, windowMs);
      if (existing) return reached(scope, entry, existing, existing.id);
      refuseStart(scope, cmd.agent.id);
      const opened = await entry.openKeyed(workspaceId, space, key, windowMs, cmd);
      return reached(scope, entry, opened, opened.id);
    },
    findKeyed: async (workspaceId, space, key, windowMs) => {
      refuseOperation(scope, "read");
      return visible(scope, entry, await entry.findKeyed(workspaceId, space, key, windowMs));
    },
    namesOf: async (workspaceId, sessionId) => {
      refuseOperation(scope, "read");
      // A session's names are the caller's to see only when it reaches the session.
      const session = isSessionId(sessionId) ? await entry.findNamed(workspaceId, sessionId) : null;
      return session && (await reaches(scope, entry, session)) ? entry.namesOf(workspaceId, sessionId) : [];
    },
  };
}

/** `scopedServices` for the principal the request authenticated as. */
export function servicesFor<S extends EdgeServices>(services: S, request: FastifyRequest): S {
  return scopedServices(services, principalOf(request));
}
