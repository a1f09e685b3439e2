import { decodeCommitted } from "../../../coordinator/factCodec.js";
import type { AppendPrecondition, SessionRecord } from "../../../coordinator/ports.js";
import { eventDto, pageDto } from "../dto.js";
import { type ManagedAgentsDeps, rangeMs } from "../edgeDeps.js";
import { readRubricFiles, rubricFileReader } from "../outcomeRubrics.js";
import { toDomainInputs } from "../routes/userInputs.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import { listEventsQuerySchema, sendEventsBodySchema, streamEventsQuerySchema } from "../schemas/events.js";
import { sendDedupe } from "../sendDedupe.js";

// The event operations of the Managed wire, transport-free (HTTP routes and in-process client).

/** What a send carries besides its body: the headers that mark a retry, and a lease precondition. */
export interface SendContext {
  headers: Record<string, string | string[] | undefined>;
  precondition?: AppendPrecondition | undefined;
}

export async function sendEvents(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  rawBody: unknown,
  context: SendContext,
) {
  const body = parseBody(sendEventsBodySchema, rawBody);
  const rubrics = await readRubricFiles(body.events, rubricFileReader(deps, workspaceId, sessionId));
  const inputs = toDomainInputs(body.events, rubrics);
  const echoed = await deps.sessions.send(workspaceId, sessionId, inputs, {
    dedupe: sendDedupe(context.headers, inputs),
    precondition: context.precondition,
  });
  return { data: echoed.map((fact) => eventDto(decodeCommitted(fact))) };
}

export async function listEvents(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  rawQuery: RawQuery,
  /** One thread's events (`/threads/{id}/events`); the session's own (its primary thread's) without. */
  threadId?: string,
) {
  const q = parseQuery(listEventsQuerySchema, rawQuery);
  const session =
    threadId === undefined
      ? await deps.sessions.get(workspaceId, sessionId)
      : { ...(await deps.sessions.getThread(workspaceId, sessionId, threadId)).session, threadId };
  const page = await deps.stream.history.listEvents(session.id, session.threadId, {
    limit: q.limit,
    cursor: q.page ?? null,
    order: q.order,
    ...(q.types ? { types: [...q.types] } : {}),
    ...(q.created_at ? { createdAt: rangeMs(q.created_at) } : {}),
  });
  return pageDto(page, (fact) => eventDto(decodeCommitted(fact)));
}

/** A live stream's subject: the session (it must exist) and the delta previews asked for. */
export async function streamSubject(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  rawQuery: RawQuery,
): Promise<{ session: SessionRecord; threadVersion: number | undefined; deltaTypes: ReadonlySet<string> }> {
  const q = parseQuery(streamEventsQuerySchema, rawQuery);
  // One read: the session authorizes the stream, its thread's version is where the stream starts.
  const { session, threadVersion } = await deps.sessions.getForStream(workspaceId, sessionId);
  return { session, threadVersion, deltaTypes: new Set(q.event_deltas ?? []) };
}

/**
 * One thread's live stream subject: the session with that thread in its place (the tail follows a
 * thread by id), and the previews asked for. The tail reads where the thread stands itself.
 */
export async function threadStreamSubject(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  sessionId: string,
  threadId: string,
  rawQuery: RawQuery,
): Promise<{ session: SessionRecord; deltaTypes: ReadonlySet<string> }> {
  const q = parseQuery(streamEventsQuerySchema, rawQuery);
  const { session } = await deps.sessions.getThread(workspaceId, sessionId, threadId);
  return { session: { ...session, threadId }, deltaTypes: new Set(q.event_deltas ?? []) };
}
