import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { principalShareOf } from "../http/principalShares.js";
import type { AgentToolSession } from "./agentToolServer.js";

/** One MCP session: transport state of this replica, never a record of runs. */
export interface McpSession extends AgentToolSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsedAt: number;
  /** Who opened it (`principalKey`): only the same key or token reaches it again. */
  owner: string;
  /** The services as the opener's scope narrows them (its agents are the tools). */
  services: EdgeServices;
}

export interface McpSessionLimits {
  /** A session no request used for this long is closed; its client initializes a new one. */
  idleMs: number;
  /**
   * Sessions one workspace may hold on a replica; a new one closes the least recently used of the
   * credential holding the most. One credential holds at most its share (`principalShares.ts`).
   */
  perWorkspace: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = { idleMs: 60 * 60_000, perWorkspace: 256 };

/**
 * The MCP sessions of this replica, by `Mcp-Session-Id`. A session belongs to the API key (or
 * access token) that initialized it, in its workspace: looked up with another it does not exist. Bounded per
 * workspace and by idleness, so a client that never sends DELETE costs nothing for long. One
 * credential never takes another's session to make room for itself: past its share it is refused.
 */
export class McpSessionRegistry {
  private readonly sessions = new Map<string, McpSession>();
  readonly perPrincipal: number;

  constructor(
    private readonly limits: McpSessionLimits,
    private readonly now: () => number,
  ) {
    this.perPrincipal = principalShareOf(limits.perWorkspace);
  }

  /** Whether `owner` may open another session in the workspace (it holds less than its share). */
  admits(workspaceId: string, owner: string): boolean {
    return this.ofOwner(workspaceId, owner).length < this.perPrincipal;
  }

  get(id: string, workspaceId: string, owner: string): McpSession | null {
    const session = this.sessions.get(id);
    if (!session || session.workspaceId !== workspaceId || session.owner !== owner || session.ending)
      return null;
    session.lastUsedAt = this.now();
    return session;
  }

  add(session: McpSession): void {
    const own = this.ofOwner(session.workspaceId, session.owner);
    // Initializes racing past `admits`: the owner's own oldest session makes room, never another's.
    if (own.length >= this.perPrincipal) void this.close(leastRecentlyUsed(own));
    else {
      const ofWorkspace = this.ofWorkspace(session.workspaceId);
      if (ofWorkspace.length >= this.limits.perWorkspace)
        void this.close(leastRecentlyUsed(largestHoldings(ofWorkspace)));
    }
    this.sessions.set(session.id, session);
  }

  /** Closes a session (its credential ended): its transport and streams with it. */
  async end(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (session) await this.close(session);
  }

  /** The session ended (DELETE, or its transport closed): its in-flight calls are no cancels. */
  forget(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    session.ending = true;
    this.sessions.delete(id);
  }

  /** Workspaces with a session whose client read the tool list (the ones to watch for changes). */
  watchedWorkspaces(): Map<string, McpSession[]> {
    const out = new Map<string, McpSession[]>();
    for (const session of this.sessions.values()) {
      if (session.listed === null) continue;
      const list = out.get(session.workspaceId) ?? [];
      list.push(session);
      out.set(session.workspaceId, list);
    }
    return out;
  }

  closeIdle(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const session of [...this.sessions.values()]) {
      if (session.lastUsedAt < cutoff) void this.close(session);
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.close(s)));
  }

  private ofWorkspace(workspaceId: string): McpSession[] {
    return [...this.sessions.values()].filter((s) => s.workspaceId === workspaceId);
  }

  private ofOwner(workspaceId: string, owner: string): McpSession[] {
    return this.ofWorkspace(workspaceId).filter((s) => s.owner === owner);
  }

  private async close(session: McpSession): Promise<void> {
    this.forget(session.id);
    try {
      await session.server.close();
    } catch {
      // Closing a transport whose streams are already gone has nothing left to do.
    }
  }
}

function leastRecentlyUsed(sessions: readonly McpSession[]): McpSession {
  return sessions.reduce((a, b) => (b.lastUsedAt < a.lastUsedAt ? b : a));
}

/** The sessions of the owners holding the most (a newcomer under its share holds fewer). */
function largestHoldings(sessions: readonly McpSession[]): McpSession[] {
  const counts = new Map<string, number>();
  for (const session of sessions) counts.set(session.owner, (counts.get(session.owner) ?? 0) + 1);
  const most = Math.max(...counts.values());
  return sessions.filter((session) => counts.get(session.owner) === most);
}
