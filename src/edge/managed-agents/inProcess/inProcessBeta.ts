import type Anthropic from "@anthropic-ai/sdk";
import type { Actor } from "../../../control/adminAudit.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import * as agentOps from "../operations/agents.js";
import * as environmentOps from "../operations/environments.js";
import * as eventOps from "../operations/events.js";
import * as sessionOps from "../operations/sessions.js";
import * as threadOps from "../operations/threads.js";
import type { RawQuery } from "../schemas/common.js";
import { InProcessEventStream, type SessionEventStream } from "./eventStream.js";
import { InProcessPage, InProcessPagePromise, type ListPagePromise, type PageBody } from "./pages.js";
import { type FailureLog, toSdkError } from "./sdkErrors.js";
import { wireBody, wireQuery, wireResult } from "./wireValues.js";

type Agent = Anthropic.Beta.Agents.BetaManagedAgentsAgent;
type Environment = Anthropic.Beta.Environments.BetaEnvironment;
type Session = Anthropic.Beta.Sessions.BetaManagedAgentsSession;
type SessionEvent = Anthropic.Beta.Sessions.Events.BetaManagedAgentsSessionEvent;
type StreamEvent = Anthropic.Beta.Sessions.Events.BetaManagedAgentsStreamSessionEvents;
type SentEvents = Anthropic.Beta.Sessions.Events.BetaManagedAgentsSendSessionEvents;
type Thread = Anthropic.Beta.Sessions.Threads.BetaManagedAgentsSessionThread;
type ThreadStreamEvent = Anthropic.Beta.Sessions.Threads.BetaManagedAgentsStreamSessionThreadEvents;

/** Per-call options the in-process client honours; the SDK's other `RequestOptions` mean nothing here. */
export interface InProcessRequestOptions {
  /** As the SDK's: a send repeated with the same key and body returns the original echo. */
  idempotencyKey?: string;
}

/** `awaken.beta`: the official SDK's `client.beta` agents, environments and sessions (with events and threads), in process. */
export interface InProcessBeta {
  agents: {
    create(params: Anthropic.Beta.Agents.AgentCreateParams): Promise<Agent>;
    retrieve(agentId: string, params?: Anthropic.Beta.Agents.AgentRetrieveParams | null): Promise<Agent>;
    update(agentId: string, params: Anthropic.Beta.Agents.AgentUpdateParams): Promise<Agent>;
    list(params?: Anthropic.Beta.Agents.AgentListParams | null): ListPagePromise<Agent>;
    archive(agentId: string, params?: Anthropic.Beta.Agents.AgentArchiveParams | null): Promise<Agent>;
  };
  environments: {
    create(params: Anthropic.Beta.Environments.EnvironmentCreateParams): Promise<Environment>;
    retrieve(
      environmentId: string,
      params?: Anthropic.Beta.Environments.EnvironmentRetrieveParams | null,
    ): Promise<Environment>;
    update(
      environmentId: string,
      params: Anthropic.Beta.Environments.EnvironmentUpdateParams,
    ): Promise<Environment>;
    list(params?: Anthropic.Beta.Environments.EnvironmentListParams | null): ListPagePromise<Environment>;
    delete(
      environmentId: string,
      params?: Anthropic.Beta.Environments.EnvironmentDeleteParams | null,
    ): Promise<Anthropic.Beta.Environments.BetaEnvironmentDeleteResponse>;
    archive(
      environmentId: string,
      params?: Anthropic.Beta.Environments.EnvironmentArchiveParams | null,
    ): Promise<Environment>;
  };
  sessions: {
    create(params: Anthropic.Beta.Sessions.SessionCreateParams): Promise<Session>;
    retrieve(
      sessionId: string,
      params?: Anthropic.Beta.Sessions.SessionRetrieveParams | null,
    ): Promise<Session>;
    update(sessionId: string, params: Anthropic.Beta.Sessions.SessionUpdateParams): Promise<Session>;
    list(params?: Anthropic.Beta.Sessions.SessionListParams | null): ListPagePromise<Session>;
    delete(
      sessionId: string,
      params?: Anthropic.Beta.Sessions.SessionDeleteParams | null,
    ): Promise<Anthropic.Beta.Sessions.BetaManagedAgentsDeletedSession>;
    archive(
      sessionId: string,
      params?: Anthropic.Beta.Sessions.SessionArchiveParams | null,
    ): Promise<Session>;
    events: {
      send(
        sessionId: string,
        params: Anthropic.Beta.Sessions.Events.EventSendParams,
        options?: InProcessRequestOptions,
      ): Promise<SentEvents>;
      list(
        sessionId: string,
        params?: Anthropic.Beta.Sessions.Events.EventListParams | null,
      ): ListPagePromise<SessionEvent>;
      stream(
        sessionId: string,
        params?: Anthropic.Beta.Sessions.Events.EventStreamParams,
      ): Promise<SessionEventStream<StreamEvent>>;
    };
    threads: {
      list(
        sessionId: string,
        params?: Anthropic.Beta.Sessions.ThreadListParams | null,
      ): ListPagePromise<Thread>;
      retrieve(threadId: string, params: Anthropic.Beta.Sessions.ThreadRetrieveParams): Promise<Thread>;
      archive(threadId: string, params: Anthropic.Beta.Sessions.ThreadArchiveParams): Promise<Thread>;
      events: {
        list(
          threadId: string,
          params: Anthropic.Beta.Sessions.Threads.EventListParams,
        ): ListPagePromise<SessionEvent>;
        stream(
          threadId: string,
          params: Anthropic.Beta.Sessions.Threads.EventStreamParams,
        ): Promise<SessionEventStream<ThreadStreamEvent>>;
      };
    };
  };
}

/**
 * The in-process edge of the Managed wire: every call goes through the same operations the HTTP
 * routes call (the same schemas, services, input ledger and commit fence, the same DTOs), acting in
 * one workspace, with the SDK's method names, params, results and error classes.
 */
export function inProcessBeta(deps: ManagedAgentsDeps, workspaceId: string, log: FailureLog): InProcessBeta {
  const ws = workspaceId;
  // The embedding process is the operator; its changes are audited as `embedded`.
  const by: Actor = { workspaceId, actor: "embedded" };
  async function call<T>(operation: () => Promise<unknown>): Promise<T> {
    try {
      return wireResult<T>(await operation());
    } catch (error) {
      throw toSdkError(error, log);
    }
  }
  function list<T>(params: object | null | undefined, read: (query: RawQuery) => Promise<unknown>) {
    const base = wireQuery(params);
    const fetchPage = (page?: string) =>
      call<PageBody<T>>(() => read(page === undefined ? base : { ...base, page }));
    return new InProcessPagePromise<T>(fetchPage().then((body) => new InProcessPage(body, fetchPage)));
  }

  return {
    agents: {
      create: (params) => call(() => agentOps.createAgent(deps, by, wireBody(params))),
      retrieve: (id, params) => call(() => agentOps.retrieveAgent(deps, ws, id, wireQuery(params))),
      update: (id, params) => call(() => agentOps.updateAgent(deps, by, id, wireBody(params))),
      list: (params) => list<Agent>(params, (query) => agentOps.listAgents(deps, ws, query)),
      archive: (id) => call(() => agentOps.archiveAgent(deps, by, id)),
    },
    environments: {
      create: (params) => call(() => environmentOps.createEnvironment(deps, by, wireBody(params))),
      retrieve: (id) => call(() => environmentOps.retrieveEnvironment(deps, ws, id)),
      update: (id, params) => call(() => environmentOps.updateEnvironment(deps, by, id, wireBody(params))),
      list: (params) =>
        list<Environment>(params, (query) => environmentOps.listEnvironments(deps, ws, query)),
      delete: (id) => call(() => environmentOps.deleteEnvironment(deps, by, id)),
      archive: (id) => call(() => environmentOps.archiveEnvironment(deps, by, id)),
    },
    sessions: {
      create: (params) => call(() => sessionOps.createSession(deps, ws, wireBody(params))),
      retrieve: (id) => call(() => sessionOps.retrieveSession(deps, ws, id)),
      update: (id, params) => call(() => sessionOps.updateSession(deps, ws, id, wireBody(params))),
      list: (params) => list<Session>(params, (query) => sessionOps.listSessions(deps, ws, query)),
      delete: (id) => call(() => sessionOps.deleteSession(deps, ws, id)),
      archive: (id) => call(() => sessionOps.archiveSession(deps, ws, id)),
      events: {
        send: (id, params, options) =>
          call(() =>
            eventOps.sendEvents(deps, ws, id, wireBody(params), {
              headers: options?.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {},
            }),
          ),
        list: (id, params) => list<SessionEvent>(params, (query) => eventOps.listEvents(deps, ws, id, query)),
        stream: async (id, params) => {
          try {
            const { session, threadVersion, deltaTypes } = await eventOps.streamSubject(
              deps,
              ws,
              id,
              wireQuery(params),
            );
            return await InProcessEventStream.open<StreamEvent>(
              deps.tail,
              deps.stream.history,
              session,
              deltaTypes,
              threadVersion,
            );
          } catch (error) {
            throw toSdkError(error, log);
          }
        },
      },
      threads: {
        list: (id, params) => list<Thread>(params, (query) => threadOps.listThreads(deps, ws, id, query)),
        retrieve: (threadId, { session_id }) =>
          call(() => threadOps.retrieveThread(deps, ws, session_id, threadId)),
        archive: (threadId, { session_id }) =>
          call(() => threadOps.archiveThread(deps, ws, session_id, threadId)),
        events: {
          list: (threadId, { session_id, ...params }) =>
            list<SessionEvent>(params, (query) => eventOps.listEvents(deps, ws, session_id, query, threadId)),
          stream: async (threadId, { session_id, ...params }) => {
            try {
              const { session, deltaTypes } = await eventOps.threadStreamSubject(
                deps,
                ws,
                session_id,
                threadId,
                wireQuery(params),
              );
              return await InProcessEventStream.open<ThreadStreamEvent>(
                deps.tail,
                deps.stream.history,
                session,
                deltaTypes,
              );
            } catch (error) {
              throw toSdkError(error, log);
            }
          },
        },
      },
    },
  };
}
