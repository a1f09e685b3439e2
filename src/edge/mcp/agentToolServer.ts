import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { ToolCall } from "../../coordinator/factVocabulary.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { agentIdOfToolName, agentToolOf, listAgentTools, toolListFingerprint } from "./agentTools.js";
import { type ApprovalAnswer, runAgentTurn } from "./agentTurn.js";
import { CallRefusal, parseCallInput } from "./callInput.js";
import { callResultOf, inputPreview } from "./callResults.js";

/** How long a form asking for an approval may stay open; unanswered, the approval stays pending. */
const APPROVAL_FORM_TIMEOUT_MS = 15 * 60_000;
const DENY_MESSAGE_MAX = 2_000;
/** The `_meta` key of an approval form that names the call it decides. */
export const TOOL_CALL_META = "dev.awaken/tool_call";

/** What one MCP session's server shares with the session registry. */
export interface AgentToolSession {
  workspaceId: string;
  /** The fingerprint of the tool list this session's client last read; null: none since notified. */
  listed: string | null;
  /** Set when the MCP session ends: its calls' aborts are then no cancel. */
  ending: boolean;
}

/**
 * The MCP server of one MCP session: the workspace's agents as tools. The server holds no run
 * state: each call is a turn of a session the session services keep, and what the call answers
 * names that session.
 */
export function agentToolServer(
  services: EdgeServices,
  session: AgentToolSession,
  log: FastifyBaseLogger,
): Server {
  const server = new Server(
    { name: "awaken-agents", version: "1" },
    {
      capabilities: { tools: { listChanged: true } },
      instructions:
        "Each tool is an agent. A call runs one turn and answers the agent's final text; pass the session_id it returns to continue the conversation.",
    },
  );
  const { workspaceId } = session;

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      const tools = await listAgentTools(services.agents, workspaceId);
      session.listed = toolListFingerprint(tools);
      return { tools: tools.map((t) => t.tool) };
    } catch (error) {
      log.error({ err: error }, "mcp tools/list failed");
      throw new McpError(ErrorCode.InternalError, "Listing the agents failed on the server; try again.");
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const agent = await agentOfTool(services, workspaceId, name, log);
    let input: ReturnType<typeof parseCallInput>;
    try {
      input = parseCallInput(request.params.arguments ?? {});
    } catch (error) {
      if (error instanceof CallRefusal) return callResultOf({ kind: "refused", message: error.message });
      throw error;
    }
    const progressToken = extra._meta?.progressToken;
    let progress = 0;
    const canDecide = server.getClientCapabilities()?.elicitation?.form !== undefined;
    const decide = async (call: ToolCall): Promise<ApprovalAnswer> => {
      try {
        const result = await server.elicitInput(
          {
            mode: "form",
            message: `The agent "${agent.agentName}" asks to run the tool "${call.name}" with input ${inputPreview(call.input)}. Allow it?`,
            // The call as data, for a client that shows it its own way (or answers it elsewhere).
            _meta: { [TOOL_CALL_META]: { id: call.id, name: call.name, input: call.input } },
            requestedSchema: {
              type: "object",
              properties: {
                decision: { type: "string", title: "Decision", enum: ["allow", "deny"] },
                reason: {
                  type: "string",
                  title: "Reason",
                  description: "Told to the agent when you deny.",
                },
              },
              required: ["decision"],
            },
          },
          { relatedRequestId: extra.requestId, signal: extra.signal, timeout: APPROVAL_FORM_TIMEOUT_MS },
        );
        if (result.action === "decline") return { allowed: false, denyMessage: null };
        if (result.action !== "accept") return null;
        const decision = result.content?.decision;
        if (decision !== "allow" && decision !== "deny") return null;
        const reason = result.content?.reason;
        const denyMessage =
          decision === "deny" && typeof reason === "string" && reason.trim() !== ""
            ? reason.trim().slice(0, DENY_MESSAGE_MAX)
            : null;
        return { allowed: decision === "allow", denyMessage };
      } catch {
        // Timed out, dismissed with an invalid form, or the client went away: the approval stays
        // pending and can be answered over another edge.
        return null;
      }
    };
    try {
      // A failed check only delays the notice to the next one.
      await notifyIfToolsChanged(services, session, (n) => extra.sendNotification(n)).catch(() => {});
      const outcome = await runAgentTurn(services, workspaceId, agent.agentId, input, {
        signal: extra.signal,
        cancelled: () => !session.ending,
        wantsProgress: progressToken !== undefined,
        progress: (message) => {
          if (progressToken === undefined) return;
          progress += 1;
          void extra
            .sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress, message },
            })
            .catch(() => {});
        },
        ...(canDecide ? { decide } : {}),
      });
      // A cancelled call gets no answer (the SDK sends none); the outcome is only for the log.
      return callResultOf(outcome ?? { kind: "refused", message: "The call was cancelled." });
    } catch (error) {
      if (error instanceof AwakenError && error.category !== "internal") {
        return callResultOf({ kind: "refused", message: error.message });
      }
      log.error({ err: error }, "mcp tools/call failed");
      return callResultOf({ kind: "refused", message: "The turn failed on the server; try again." });
    }
  });
  return server;
}

/** The agent a tool name names in this workspace; an unknown name is a JSON-RPC invalid-params error. */
async function agentOfTool(
  services: EdgeServices,
  workspaceId: string,
  name: string,
  log: FastifyBaseLogger,
) {
  const unknown = new McpError(
    ErrorCode.InvalidParams,
    `Unknown tool: ${JSON.stringify(name.slice(0, 200))}. List the tools again; each active agent is one.`,
  );
  const agentId = agentIdOfToolName(name);
  if (!agentId) throw unknown;
  let view: Awaited<ReturnType<EdgeServices["agents"]["retrieve"]>>;
  try {
    view = await services.agents.retrieve(workspaceId, agentId);
  } catch (error) {
    if (error instanceof AwakenError && error.category !== "internal") throw unknown;
    log.error({ err: error }, "mcp agent lookup failed");
    throw new McpError(ErrorCode.InternalError, "Looking up the agent failed on the server; try again.");
  }
  const tool = agentToolOf(view.head.id, view.publication);
  if (view.head.archivedAt !== null || tool.tool.name !== name) throw unknown;
  return tool;
}

/**
 * Tells the client its tool list changed since it read it (at most once until it lists again).
 * Called by a tool call (the notice then rides on the call's stream) and by the session
 * registry's periodic check (on the client's GET stream).
 */
export async function notifyIfToolsChanged(
  services: EdgeServices,
  session: AgentToolSession,
  send: (notification: { method: "notifications/tools/list_changed" }) => Promise<void>,
  current?: string,
): Promise<void> {
  if (session.listed === null) return;
  const now = current ?? toolListFingerprint(await listAgentTools(services.agents, session.workspaceId));
  if (session.listed === null || now === session.listed) return;
  session.listed = null;
  await send({ method: "notifications/tools/list_changed" });
}
