import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listThreadsQuerySchema } from "../schemas/threads.js";
import { threadDto } from "../threadDto.js";

// The session thread operations of the Managed wire, transport-free. A thread's events are listed
// and streamed by the event operations (`events.ts`), which take a thread id.

export async function listThreads(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  rawQuery: RawQuery,
) {
  const q = parseQuery(listThreadsQuerySchema, rawQuery);
  const { session, page } = await deps.sessions.listThreads(workspaceId, sessionId, {
    limit: q.limit,
    cursor: q.page ?? null,
    ...(q.statuses ? { statuses: [...q.statuses] } : {}),
  });
  const now = deps.clock.now();
  return { data: page.data.map((thread) => threadDto(session, thread, now)), next_page: page.nextCursor };
}

export async function retrieveThread(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  threadId: string,
) {
  const { session, thread } = await deps.sessions.getThread(workspaceId, sessionId, threadId);
  return threadDto(session, thread, deps.clock.now());
}

export async function archiveThread(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  threadId: string,
) {
  const { session, thread } = await deps.sessions.archiveThread(workspaceId, sessionId, threadId);
  return threadDto(session, thread, deps.clock.now());
}
