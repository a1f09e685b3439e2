import {
  type AgentApp,
  type AgentContext,
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { type DiagnosticLog, requestErrorOf } from "./acpErrors.js";
import { updatesOf } from "./eventUpdates.js";
import { decisionOf, PERMISSION_OPTIONS } from "./permissions.js";
import { messageContent } from "./promptContent.js";
import { PromptTurn } from "./promptTurn.js";
import type { ServerSessions } from "./serverSessions.js";
import { checkSessionId } from "./sessionIds.js";

export interface AcpAgentOptions {
  api: ServerSessions;
  /** The agent every session of this process talks to. */
  agentId: string;
  /** The environment new sessions run in (resolved on the first `session/new`). */
  environmentId: () => Promise<string>;
  version: string;
  log: DiagnosticLog;
}

/**
 * The ACP agent an editor launches: each ACP session is an ordinary Awaken session of one agent
 * (its id is the session id), reached over the server's Managed Agents API. The process keeps
 * only which sessions this editor opened and the turn running in each.
 */
export function acpAgent(options: AcpAgentOptions): AgentApp {
  const { api, agentId, log } = options;
  /** Sessions opened on this connection, with the prompt turn running in each (null: none). */
  const open = new Map<string, PromptTurn | null>();
  let warnedMcp = false;

  const guard =
    <C, R>(handler: (context: C) => Promise<R>) =>
    async (context: C): Promise<R> => {
      try {
        return await handler(context);
      } catch (error) {
        throw requestErrorOf(error, log);
      }
    };

  const notify = (client: AgentContext, sessionId: string, update: SessionUpdate) =>
    client.notify(methods.client.session.update, { sessionId, update });

  const ignoreEditorMcp = (servers: readonly unknown[]) => {
    if (servers.length === 0 || warnedMcp) return;
    warnedMcp = true;
    // The agent runs on the server, which cannot start the editor's local servers: its own MCP servers apply.
    log("the editor's MCP servers are not passed on: the agent uses the MCP servers its definition names");
  };

  return agent({ name: "awaken" })
    .onRequest(methods.agent.initialize, async () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
      },
      agentInfo: { name: "awaken", title: "Awaken", version: options.version },
      authMethods: [],
    }))
    .onRequest(
      methods.agent.session.new,
      guard(async ({ params }) => {
        ignoreEditorMcp(params.mcpServers);
        const session = await api.create(agentId, await options.environmentId());
        open.set(session.id, null);
        return { sessionId: session.id };
      }),
    )
    .onRequest(
      methods.agent.session.load,
      guard(async ({ params, client, signal }) => {
        const sessionId = checkSessionId(params.sessionId);
        ignoreEditorMcp(params.mcpServers);
        const session = await api.retrieve(sessionId);
        if (!session) throw RequestError.sessionNotFound(sessionId);
        if (session.agentId !== agentId) {
          throw RequestError.invalidParams(
            { sessionId },
            `session ${sessionId} is a conversation with agent ${session.agentId}, not ${agentId}`,
          );
        }
        for await (const event of api.history(sessionId, signal)) {
          for (const update of updatesOf(event)) await notify(client, sessionId, update);
        }
        if (!open.has(sessionId)) open.set(sessionId, null);
        return {};
      }),
    )
    .onRequest(
      methods.agent.session.prompt,
      guard(async ({ params, client, signal }) => {
        const { sessionId } = params;
        if (!open.has(sessionId)) throw RequestError.sessionNotFound(sessionId);
        if (open.get(sessionId)) {
          throw RequestError.invalidRequest({ sessionId }, "a prompt is already running in this session");
        }
        const content = messageContent(params.prompt);
        await refuseBusy(api, sessionId);
        const turn = new PromptTurn(api, sessionId, {
          update: (update) => notify(client, sessionId, update),
          askPermission: async (toolCall) => {
            try {
              const answer = await client.request(methods.client.session.requestPermission, {
                sessionId,
                toolCall,
                options: PERMISSION_OPTIONS,
              });
              return decisionOf(answer);
            } catch (error) {
              // An editor that cannot answer does not allow anything: the turn is interrupted.
              log(`the permission request failed: ${error instanceof Error ? error.message : String(error)}`);
              return "cancelled";
            }
          },
        });
        open.set(sessionId, turn);
        const onAbort = () => turn.cancel();
        signal.addEventListener("abort", onAbort);
        try {
          return { stopReason: await turn.run(content) };
        } finally {
          signal.removeEventListener("abort", onAbort);
          open.set(sessionId, null);
        }
      }),
    )
    .onNotification(methods.agent.session.cancel, async ({ params }) => {
      open.get(params.sessionId)?.cancel();
    });
}

/**
 * A session parked on answers takes a message only as queued input, so the prompt would wait for
 * answers the editor never saw; an ended session takes none. Both are refused before anything is sent.
 */
async function refuseBusy(api: ServerSessions, sessionId: string): Promise<void> {
  const status = await api.lastStatus(sessionId);
  if (status?.type === "session.status_terminated") {
    throw RequestError.invalidRequest(
      { sessionId },
      `session ${sessionId} has ended and takes no more messages`,
    );
  }
  const reason = status?.stop_reason as { type?: string; event_ids?: unknown } | undefined;
  if (status?.type === "session.status_idle" && reason?.type === "requires_action") {
    const ids = Array.isArray(reason.event_ids) ? reason.event_ids.join(", ") : "";
    throw RequestError.invalidRequest(
      { sessionId },
      `session ${sessionId} waits for answers to calls ${ids} (approvals or client tool results); ` +
        `answer them over the Managed Agents API (POST /v1/sessions/${sessionId}/events) first`,
    );
  }
}
