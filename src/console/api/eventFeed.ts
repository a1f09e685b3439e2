import type Anthropic from "@anthropic-ai/sdk";
import type { SessionEvent, StreamEvent } from "./wire.js";

/** Where a transcript's events come from: the session's primary thread, or one thread of it. */
export interface EventFeed {
  stream(signal: AbortSignal): Promise<AsyncIterable<StreamEvent>>;
  list(signal: AbortSignal): AsyncIterable<SessionEvent>;
}

const DELTAS = ["agent.message", "agent.thinking"] as const;

/**
 * The session's own events are its primary thread's; a child thread's are read through the SDK's
 * per-thread routes, which carry the same event shapes.
 */
export function eventFeed(client: Anthropic, sessionId: string, threadId: string | null): EventFeed {
  if (threadId === null) {
    return {
      stream: (signal) =>
        client.beta.sessions.events.stream(sessionId, { event_deltas: [...DELTAS] }, { signal }),
      list: (signal) => client.beta.sessions.events.list(sessionId, { limit: 1000 }, { signal }),
    };
  }
  const threads = client.beta.sessions.threads;
  return {
    stream: async (signal) =>
      (await threads.events.stream(
        threadId,
        { session_id: sessionId, event_deltas: [...DELTAS] },
        { signal },
      )) as AsyncIterable<StreamEvent>,
    list: (signal) => threads.events.list(threadId, { session_id: sessionId, limit: 1000 }, { signal }),
  };
}
