import Anthropic from "@anthropic-ai/sdk";

/** A session event as the Managed wire carries it; the adapter reads its fields by name. */
export type WireEvent = { type: string; id: string } & Record<string, unknown>;

/** A user event posted to a session (`user.message`, `user.interrupt`, `user.tool_confirmation`). */
export type UserEvent = { type: string } & Record<string, unknown>;

/** What the adapter reads of a session. */
export interface SessionSummary {
  id: string;
  agentId: string;
  status: string;
}

/**
 * Everything the ACP process asks of the Awaken server, over its public Managed Agents API: the
 * process is a client like any other and keeps no state of its own beyond which sessions it opened.
 */
export interface ServerSessions {
  create(agentId: string, environmentId: string): Promise<SessionSummary>;
  /** null when the session does not exist (or is not this key's to see). */
  retrieve(sessionId: string): Promise<SessionSummary | null>;
  /** The committed history, oldest first. */
  history(sessionId: string, signal?: AbortSignal): AsyncIterable<WireEvent>;
  /** The session's latest status event (idle, running or terminated), or null before its first. */
  lastStatus(sessionId: string): Promise<WireEvent | null>;
  /** Posts user events; answers their echoes (with their ids). */
  send(sessionId: string, events: UserEvent[]): Promise<WireEvent[]>;
  /**
   * Opens the live tail with text and thinking previews. Resolves once the server has fixed the
   * stream's start, so what is sent afterwards is on it.
   */
  stream(sessionId: string, signal: AbortSignal): Promise<AsyncIterable<WireEvent>>;
  /** The id of an active environment by name, or null. */
  findEnvironment(name: string): Promise<string | null>;
  createEnvironment(name: string, description: string): Promise<string>;
}

/** `ServerSessions` over the official SDK (the same client every Managed-wire user has). */
export function serverSessions(baseURL: string, apiKey: string): ServerSessions {
  // The SDK's own retries: its Stainless retry headers let the server drop a duplicated send.
  const client = new Anthropic({ baseURL, apiKey, maxRetries: 2 });
  const summary = (s: { id: string; agent: { id: string }; status: string }): SessionSummary => ({
    id: s.id,
    agentId: s.agent.id,
    status: s.status,
  });
  return {
    async create(agentId, environmentId) {
      return summary(await client.beta.sessions.create({ agent: agentId, environment_id: environmentId }));
    },
    async retrieve(sessionId) {
      try {
        return summary(await client.beta.sessions.retrieve(sessionId));
      } catch (error) {
        if (error instanceof Anthropic.NotFoundError) return null;
        throw error;
      }
    },
    async *history(sessionId, signal) {
      for await (const event of client.beta.sessions.events.list(sessionId, { limit: 1000 }, { signal })) {
        yield event as unknown as WireEvent;
      }
    },
    async lastStatus(sessionId) {
      const types = ["session.status_idle", "session.status_running", "session.status_terminated"];
      const page = await client.beta.sessions.events.list(sessionId, {
        types,
        order: "desc",
        limit: 1,
      } as never);
      return (page.data[0] as unknown as WireEvent | undefined) ?? null;
    },
    async send(sessionId, events) {
      const answer = await client.beta.sessions.events.send(sessionId, { events } as never);
      return (answer.data ?? []) as unknown as WireEvent[];
    },
    async stream(sessionId, signal) {
      const stream = await client.beta.sessions.events.stream(
        sessionId,
        { event_deltas: ["agent.message", "agent.thinking"] } as never,
        { signal },
      );
      return stream as unknown as AsyncIterable<WireEvent>;
    },
    async findEnvironment(name) {
      for await (const env of client.beta.environments.list({ limit: 100 })) {
        const e = env as unknown as { id: string; name: string; archived_at?: string | null };
        if (e.name === name && !e.archived_at) return e.id;
      }
      return null;
    },
    async createEnvironment(name, description) {
      const env = await client.beta.environments.create({
        name,
        description,
        config: { type: "cloud" },
      } as never);
      return env.id;
    },
  };
}
