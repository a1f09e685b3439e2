/**
 * The scenario through MCP and its official client, `@modelcontextprotocol/sdk`'s Client over
 * Streamable HTTP: the session's agent is one tool, each message a `tools/call` naming the
 * session, an approval an `elicitation/create` this client answers when the scenario decides it
 * (the call stays open meanwhile), and an interrupt the call's AbortSignal (`notifications/cancelled`).
 *
 * Steps MCP has no way to express are skipped, by name (`MCP_SKIPPED_STEPS`): answering a client
 * tool (MCP carries no tool result from the client to the server; the edge's result points to the
 * Managed wire), a reconnect after a disconnect (a dropped call stream is not resumed, and a new
 * call is a new turn), and the history read (MCP has no read of a session's turns), so `history`
 * is absent and steps compare the client's view with the committed history only.
 */
import type { CallToolResult, ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { connectMcp, type McpTestClient } from "../support/mcpClient.js";
import type { ProtocolDriver, ToolCallView, TurnView } from "./protocolDriver.js";

export const MCP_SKIPPED_STEPS: Readonly<Record<string, string>> = {
  "a client tool waits for the client, whose answer is committed once and reaches the model":
    "MCP cannot carry a client tool's result to the server",
  "a disconnect mid-turn, then a reconnect, shows the turn as the history holds it":
    "MCP has no resume of a dropped call; a new call is a new turn",
  "the protocol's history read tells every turn as the Managed events list does": "MCP has no history read",
};

const TOOL_CALL_META = "dev.awaken/tool_call";

interface Asked {
  call: { id: string; name: string };
  answer(result: ElicitResult): void;
}

type Step = { kind: "result"; result: CallToolResult } | { kind: "asked"; asked: Asked };

export class McpDriver implements ProtocolDriver {
  readonly name = "MCP";
  readonly disconnectInterrupts = false;
  private asked: Asked | null = null;
  private onAsked: ((asked: Asked) => void) | null = null;
  private call: Promise<CallToolResult> | null = null;

  private constructor(
    private mcp: McpTestClient,
    private readonly tool: string,
    readonly sessionId: string,
  ) {}

  static async open(baseUrl: string, agentId: string, sessionId: string): Promise<McpDriver> {
    let driver: McpDriver | null = null;
    const mcp = await connectMcp(baseUrl, {
      elicit: (request) => (driver as McpDriver).elicited(request),
    });
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name.endsWith(`_${agentId.replace(/^agent_/, "")}`));
    if (!tool) throw new Error(`no MCP tool for agent ${agentId}`);
    driver = new McpDriver(mcp, tool.name, sessionId);
    return driver;
  }

  async say(text: string): Promise<TurnView> {
    this.call = this.mcp.client.callTool({
      name: this.tool,
      arguments: { message: text, session_id: this.sessionId },
    }) as Promise<CallToolResult>;
    return this.viewOf(await this.next());
  }

  answerClientTool(): Promise<TurnView> {
    throw new Error(
      MCP_SKIPPED_STEPS[
        "a client tool waits for the client, whose answer is committed once and reaches the model"
      ],
    );
  }

  async decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView> {
    const asked = this.asked;
    if (asked?.call.id !== callId) throw new Error(`no open approval form for call ${callId}`);
    this.asked = null;
    asked.answer({
      action: "accept",
      content: { decision: allowed ? "allow" : "deny", ...(reason !== undefined ? { reason } : {}) },
    });
    return this.viewOf(await this.next());
  }

  async interruptDuringTurn(text: string): Promise<TurnView> {
    const controller = new AbortController();
    const call = this.mcp.client.callTool(
      { name: this.tool, arguments: { message: text, session_id: this.sessionId } },
      undefined,
      // Cancelled once its reply streams (the progress notice that says so).
      {
        signal: controller.signal,
        onprogress: (p) => {
          if (p.message === "The agent is writing.") controller.abort("stop");
        },
      },
    );
    try {
      await call;
    } catch {
      return { end: "interrupted", text: "", toolCalls: [] };
    }
    throw new Error("the cancelled call answered");
  }

  disconnectMidTurn(): Promise<void> {
    throw new Error(
      MCP_SKIPPED_STEPS["a disconnect mid-turn, then a reconnect, shows the turn as the history holds it"],
    );
  }

  reconnect(): Promise<TurnView> {
    throw new Error("MCP has no resume of a dropped call");
  }

  async close(): Promise<void> {
    await this.mcp.close();
  }

  /** The form stays open until the scenario decides the call (or the call ends otherwise). */
  private elicited(request: ElicitRequest): Promise<ElicitResult> {
    const call = request.params._meta?.[TOOL_CALL_META] as { id: string; name: string } | undefined;
    if (!call) return Promise.resolve({ action: "cancel" });
    return new Promise<ElicitResult>((answer) => {
      const asked = { call, answer };
      this.asked = asked;
      this.onAsked?.(asked);
    });
  }

  /** The open call's next stop: its result, or an approval form it asks for. */
  private next(): Promise<Step> {
    const call = this.call as Promise<CallToolResult>;
    return new Promise<Step>((resolve, reject) => {
      this.onAsked = (asked) => resolve({ kind: "asked", asked });
      call.then((result) => resolve({ kind: "result", result }), reject);
    }).finally(() => {
      this.onAsked = null;
    });
  }

  private viewOf(step: Step): TurnView {
    if (step.kind === "asked") {
      const { id, name } = step.asked.call;
      return { end: "waiting", text: "", toolCalls: [{ id, name, state: "awaiting_approval" }] };
    }
    const { result } = step;
    const content = result.structuredContent as {
      stop_reason: string;
      tool_calls?: ToolCallView[];
    };
    const text = (result.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
    const toolCalls = (content.tool_calls ?? []).map(({ id, name, state }) => ({ id, name, state }));
    switch (content.stop_reason) {
      case "end_turn":
        return { end: "natural", text, toolCalls };
      case "interrupted":
        return { end: "interrupted", text, toolCalls };
      case "retries_exhausted":
        return { end: "error", text: "", toolCalls, error: text };
      case "requires_action":
        return { end: "waiting", text: "", toolCalls };
      default:
        throw new Error(`unexpected stop_reason ${content.stop_reason}`);
    }
  }
}
