import type {
  ContentBlock,
  ToolCall,
  ToolCallContent,
  ToolCallUpdate,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { WireEvent } from "./serverSessions.js";

/** The Managed events that start a tool call, and the field each result names its call by. */
export const TOOL_USE_TYPES = new Set(["agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"]);
const RESULT_CALL_FIELD: Record<string, string> = {
  "agent.tool_result": "tool_use_id",
  "agent.mcp_tool_result": "mcp_tool_use_id",
  "user.tool_result": "tool_use_id",
  "user.custom_tool_result": "custom_tool_use_id",
};

/** The editor's icon for a built-in tool; anything else (MCP, custom) is "other". */
const KINDS: Record<string, ToolKind> = {
  bash: "execute",
  read: "read",
  write: "edit",
  edit: "edit",
  glob: "search",
  grep: "search",
  web_fetch: "fetch",
  web_search: "fetch",
};

/** The input field that says best what a built-in call does, shown in its title. */
const TITLE_FIELDS = ["command", "file_path", "path", "pattern", "url", "query"];
const TITLE_LIMIT = 120;

function titleOf(event: WireEvent): string {
  const name = String(event.name ?? "tool");
  const server = typeof event.mcp_server_name === "string" ? `${event.mcp_server_name}/` : "";
  const input = (event.input ?? {}) as Record<string, unknown>;
  const field = TITLE_FIELDS.find((f) => typeof input[f] === "string" && input[f] !== "");
  if (!field) return `${server}${name}`;
  const detail = String(input[field]).replace(/\s+/g, " ").trim();
  const clipped = detail.length > TITLE_LIMIT ? `${detail.slice(0, TITLE_LIMIT - 1)}…` : detail;
  return `${server}${name}: ${clipped}`;
}

/** A tool use event as the editor's tool call, pending until its result (or its permission). */
export function toolCallOf(event: WireEvent): ToolCall {
  const name = String(event.name ?? "tool");
  return {
    toolCallId: event.id,
    title: titleOf(event),
    kind: event.type === "agent.tool_use" ? (KINDS[name] ?? "other") : "other",
    status: "pending",
    rawInput: event.input ?? {},
  };
}

/** The call a result event answers, or null when the event is no tool result. */
export function resultCallId(event: WireEvent): string | null {
  const field = RESULT_CALL_FIELD[event.type];
  const id = field ? event[field] : undefined;
  return typeof id === "string" ? id : null;
}

/** A result event as the update that completes (or fails) its call, with the result's text. */
export function toolResultUpdate(event: WireEvent, callId: string): ToolCallUpdate {
  const blocks = Array.isArray(event.content) ? (event.content as Array<Record<string, unknown>>) : [];
  const content: ToolCallContent[] = blocks.flatMap((block) => {
    const shown = contentBlockOf(block);
    return shown ? [{ type: "content" as const, content: shown }] : [];
  });
  return {
    toolCallId: callId,
    status: event.is_error === true ? "failed" : "completed",
    content,
    rawOutput: { content: blocks, is_error: event.is_error === true },
  };
}

/** A Managed content block the editor can show: text as is, an image by its base64 data. */
export function contentBlockOf(block: Record<string, unknown>): ContentBlock | null {
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
  const source = block.source as Record<string, unknown> | undefined;
  if (block.type === "image" && source?.type === "base64" && typeof source.data === "string") {
    return { type: "image", data: source.data, mimeType: String(source.media_type ?? "image/png") };
  }
  return null;
}
