import Anthropic from "@anthropic-ai/sdk";
import type { InProcessBeta } from "../../src/embedded/index.js";

type Event = { type: string; id?: string } & Record<string, unknown>;

/** A value's shape: keys and value types, recursively, with ids and times left out of it. */
export function shapeOf(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === "object")
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
    );
  return typeof value;
}

async function untilIdle(stream: AsyncIterator<Event>, seen: Event[]): Promise<Event> {
  for (;;) {
    const next = await stream.next();
    if (next.done) throw new Error("the stream ended before the session went idle");
    seen.push(next.value);
    if (next.value.type === "session.status_idle") return next.value;
  }
}

/**
 * One program written once against `client.beta`: agents, environments, sessions, a streamed
 * custom-tool turn, the history, session updates and an error. It runs unchanged on the official
 * SDK over HTTP and on `awaken.beta`; what it returns is what each call gave back, as shapes.
 */
export async function betaScenario(beta: InProcessBeta) {
  const agent = await beta.agents.create({
    name: "scenario",
    model: "offline-scenario",
    tools: [
      {
        type: "custom",
        name: "lookup",
        description: "look a word up",
        input_schema: { type: "object", properties: { q: { type: "string" } } },
      },
    ],
  });
  const retrievedAgent = await beta.agents.retrieve(agent.id);
  const updatedAgent = await beta.agents.update(agent.id, { version: agent.version, description: "v2" });
  const agentPage = await beta.agents.list({ limit: 1 });
  const agentIds: string[] = [];
  for await (const a of beta.agents.list()) agentIds.push(a.id);

  const environment = await beta.environments.create({ name: "scenario" });
  const retrievedEnvironment = await beta.environments.retrieve(environment.id);
  const session = await beta.sessions.create({ agent: agent.id, environment_id: environment.id });

  const stream = await beta.sessions.events.stream(session.id);
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Event>;
  const streamed: Event[] = [];
  const sent = await beta.sessions.events.send(session.id, {
    events: [{ type: "user.message", content: [{ type: "text", text: 'call lookup {"q":"oslo"}' }] }],
  });
  const parked = await untilIdle(iterator, streamed);
  const toolUse = streamed.find((e) => e.type === "agent.custom_tool_use");
  if (!toolUse?.id) throw new Error("no custom tool call");
  const answered = await beta.sessions.events.send(session.id, {
    events: [
      {
        type: "user.custom_tool_result",
        custom_tool_use_id: toolUse.id,
        content: [{ type: "text", text: "Oslo: sunny" }],
      },
    ],
  });
  const ended = await untilIdle(iterator, streamed);
  await iterator.return?.();

  const history: Event[] = [];
  for await (const event of beta.sessions.events.list(session.id)) history.push(event as Event);
  const firstEvents = await beta.sessions.events.list(session.id, { limit: 2, order: "desc" });
  const secondEvents = firstEvents.hasNextPage() ? await firstEvents.getNextPage() : null;

  const threads = await beta.sessions.threads.list(session.id);
  const primaryThread = threads.data[0];
  if (!primaryThread) throw new Error("the session lists no thread");
  const retrievedThread = await beta.sessions.threads.retrieve(primaryThread.id, { session_id: session.id });
  const threadHistory: Event[] = [];
  for await (const event of beta.sessions.threads.events.list(primaryThread.id, { session_id: session.id }))
    threadHistory.push(event as Event);
  const threadStream = await beta.sessions.threads.events.stream(primaryThread.id, {
    session_id: session.id,
  });
  await threadStream[Symbol.asyncIterator]().return?.();
  let primaryArchive: unknown;
  try {
    await beta.sessions.threads.archive(primaryThread.id, { session_id: session.id });
  } catch (error) {
    primaryArchive = error;
  }

  const retrievedSession = await beta.sessions.retrieve(session.id);
  const updatedSession = await beta.sessions.update(session.id, { title: "renamed" });
  const sessionPage = await beta.sessions.list({ agent_id: agent.id, limit: 5 });
  const archivedSession = await beta.sessions.archive(session.id);
  const archivedAgent = await beta.agents.archive(agent.id);

  let notFound: unknown;
  try {
    await beta.sessions.retrieve("sesn_does_not_exist");
  } catch (error) {
    notFound = error;
  }
  let invalid: unknown;
  try {
    await beta.sessions.events.send(session.id, { events: [] });
  } catch (error) {
    invalid = error;
  }
  const errorFacts = (error: unknown) => ({
    isNotFound: error instanceof Anthropic.NotFoundError,
    isBadRequest: error instanceof Anthropic.BadRequestError,
    status: (error as InstanceType<typeof Anthropic.APIError>).status,
    type: (error as InstanceType<typeof Anthropic.APIError>).type,
    hasRequestId: typeof (error as InstanceType<typeof Anthropic.APIError>).requestID === "string",
  });

  return {
    values: {
      streamedTypes: streamed.map((e) => e.type),
      historyTypes: history.map((e) => e.type),
      parkedStop: (parked.stop_reason as { type: string }).type,
      endedStop: (ended.stop_reason as { type: string }).type,
      toolInput: toolUse.input,
      sentTypes: [...(sent.data ?? []), ...(answered.data ?? [])].map((e) => e.type),
      agentDescription: updatedAgent.description,
      agentPageSize: agentPage.data.length,
      agentListed: agentIds.includes(agent.id),
      eventPages: [firstEvents.data.length, secondEvents?.data.length ?? 0],
      lastEventFirst: firstEvents.data[0]?.type,
      sessionTitle: updatedSession.title,
      sessionListed: sessionPage.data.map((s) => s.id === session.id),
      archived: [archivedSession.archived_at !== null, archivedAgent.archived_at !== null],
      notFound: errorFacts(notFound),
      invalid: errorFacts(invalid),
      threadCount: threads.data.length,
      threadIsPrimary: [primaryThread.parent_thread_id, retrievedThread.id === primaryThread.id],
      threadHistoryIds: threadHistory.map((e) => e.id).join() === history.map((e) => e.id).join(),
      primaryArchive: errorFacts(primaryArchive),
    },
    ids: { sessionId: session.id },
    shapes: {
      agent: shapeOf(agent),
      retrievedAgent: shapeOf(retrievedAgent),
      agentPage: shapeOf({ data: agentPage.data, next_page: agentPage.next_page }),
      environment: shapeOf(environment),
      retrievedEnvironment: shapeOf(retrievedEnvironment),
      session: shapeOf(session),
      retrievedSession: shapeOf(retrievedSession),
      sent: shapeOf(sent),
      streamed: streamed.map(shapeOf),
      history: history.map(shapeOf),
      sessionPage: shapeOf({ data: sessionPage.data, next_page: sessionPage.next_page }),
      thread: shapeOf(retrievedThread),
      threadPage: shapeOf({ data: threads.data, next_page: threads.next_page }),
      errorBody: shapeOf((notFound as InstanceType<typeof Anthropic.APIError>).error),
    },
  };
}
