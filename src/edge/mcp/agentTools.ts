import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentService } from "../../control/agentService.js";
import type { StoredPublication } from "../../control/ports.js";
import { fingerprint } from "../../kernel/canonicalJson.js";

/** Many models (Anthropic's, OpenAI's) accept tool names of up to 64 characters. */
const NAME_MAX = 64;
const AGENT_PREFIX = "agent_";
const PAGE = 100;

/** One MCP tool of the workspace: the agent it runs and how it is listed. */
export interface AgentTool {
  agentId: string;
  agentName: string;
  tool: Tool;
}

/**
 * The tool name of an agent: a slug of its name (for the model choosing a tool) and the agent id
 * (which makes it unique and stable across restarts; only a rename changes the name). Only the
 * characters MCP and model APIs allow, at most 64 of them.
 */
export function toolNameOf(agentId: string, agentName: string): string {
  const id = agentId.startsWith(AGENT_PREFIX) ? agentId.slice(AGENT_PREFIX.length) : agentId;
  const safeId = id.replace(/[^A-Za-z0-9_-]/g, "_").slice(-(NAME_MAX - 2));
  const room = NAME_MAX - safeId.length - 1;
  const slug = agentName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, room)
    .replace(/_+$/, "");
  return `${slug || "agent"}_${safeId}`;
}

/** The agent id a tool name carries (its last `_` part), for a lookup; the full name is checked after. */
export function agentIdOfToolName(name: string): string | null {
  const match = /_([0-9a-z]{26})$/.exec(name);
  return match ? `${AGENT_PREFIX}${match[1]}` : null;
}

export const TOOL_INPUT_SCHEMA = {
  type: "object",
  properties: {
    message: { type: "string", description: "What to tell the agent: the user message of this turn." },
    session_id: {
      type: "string",
      description:
        "Continue this session (the session_id an earlier call returned) instead of starting a new one.",
    },
  },
  required: ["message"],
  additionalProperties: false,
} as const;

export const TOOL_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    session_id: { type: "string", description: "The session the turn ran in; pass it to continue." },
    stop_reason: {
      type: "string",
      description:
        "end_turn, requires_action (see pending), interrupted, retries_exhausted, refusal or budget_reached.",
    },
    tool_calls: {
      type: "array",
      description: "The turn's tool calls and where each stands.",
      items: {
        type: "object",
        properties: {
          id: { type: "string" },
          name: { type: "string" },
          state: {
            type: "string",
            enum: ["done", "denied", "awaiting_result", "awaiting_approval", "incomplete"],
          },
        },
        required: ["id", "name", "state"],
      },
    },
    pending: {
      type: "array",
      description: "What the session waits for when stop_reason is requires_action.",
      items: {
        type: "object",
        properties: {
          call_id: { type: "string" },
          kind: { type: "string", enum: ["tool_confirmation", "tool_result"] },
          tool: { type: "string" },
          input: { type: "object" },
        },
        required: ["call_id", "kind", "tool", "input"],
      },
    },
  },
  required: ["session_id", "stop_reason"],
} as const;

export function agentToolOf(agentId: string, publication: StoredPublication): AgentTool {
  const { definition } = publication;
  return {
    agentId,
    agentName: definition.name,
    tool: {
      name: toolNameOf(agentId, definition.name),
      title: definition.name,
      description:
        definition.description ??
        `Runs one turn of the agent "${definition.name}" and returns its final answer.`,
      inputSchema: TOOL_INPUT_SCHEMA as unknown as Tool["inputSchema"],
      outputSchema: TOOL_OUTPUT_SCHEMA as unknown as Tool["outputSchema"],
    },
  };
}

/** Every active (unarchived) agent of the workspace as a tool, in the agent list's order. */
export async function listAgentTools(
  agents: Pick<AgentService, "list">,
  workspaceId: string,
): Promise<AgentTool[]> {
  const out: AgentTool[] = [];
  let cursor: string | null = null;
  do {
    const page = await agents.list(workspaceId, { limit: PAGE, cursor, includeArchived: false });
    for (const { head, latest } of page.data) out.push(agentToolOf(head.id, latest));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

/** What a client's tool list depends on: a change of it is a `notifications/tools/list_changed`. */
export function toolListFingerprint(tools: readonly AgentTool[]): string {
  return fingerprint(tools.map((t) => t.tool));
}
