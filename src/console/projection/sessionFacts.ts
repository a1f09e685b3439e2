/**
 * Operating facts read off a session's committed events, pure: the MCP connections its runs used
 * and how they went, and how long the first Hand tool took to answer.
 */
import type { SessionEvent } from "../api/wire.js";

export interface McpConnectionUse {
  server: string;
  calls: number;
  /** Calls whose result was an error. */
  failedCalls: number;
  /** The last connection or authentication error for this server, when there was one. */
  connectionError: string | null;
}

export function mcpConnections(
  events: readonly SessionEvent[],
  declared: readonly string[],
): McpConnectionUse[] {
  const byServer = new Map<string, McpConnectionUse>();
  const use = (server: string) => {
    let entry = byServer.get(server);
    if (!entry) {
      entry = { server, calls: 0, failedCalls: 0, connectionError: null };
      byServer.set(server, entry);
    }
    return entry;
  };
  for (const server of declared) use(server);
  const serverOfCall = new Map<string, string>();
  for (const event of events) {
    if (event.type === "agent.mcp_tool_use") {
      use(event.mcp_server_name).calls += 1;
      serverOfCall.set(event.id, event.mcp_server_name);
    } else if (event.type === "agent.mcp_tool_result" && event.is_error === true) {
      const server = serverOfCall.get(event.mcp_tool_use_id);
      if (server) use(server).failedCalls += 1;
    } else if (event.type === "session.error" && "mcp_server_name" in event.error) {
      use(event.error.mcp_server_name).connectionError = `${event.error.type}: ${event.error.message}`;
    }
  }
  return [...byServer.values()];
}

/**
 * The first built-in (Hand) tool call: from the run's start to its use, and from its use to its
 * result, in ms. A call that waited for a person's approval counts that wait apart
 * (`approvalWaitMs`, use → confirmation), so `useToResultMs` is the tool's own time.
 */
export interface FirstToolLatency {
  name: string;
  fromRunStartMs: number | null;
  useToResultMs: number | null;
  approvalWaitMs: number | null;
}

export function firstToolLatency(events: readonly SessionEvent[]): FirstToolLatency | null {
  let runStart: number | null = null;
  let first: { id: string; name: string; at: number | null } | null = null;
  let approvedAt: number | null = null;
  for (const event of events) {
    const at = event.processed_at ? Date.parse(event.processed_at) : Number.NaN;
    const time = Number.isNaN(at) ? null : at;
    if (!first && event.type === "session.status_running") runStart = time;
    else if (!first && event.type === "agent.tool_use") first = { id: event.id, name: event.name, at: time };
    else if (first && event.type === "user.tool_confirmation" && event.tool_use_id === first.id)
      approvedAt = time;
    else if (first && (event.type === "agent.tool_result" || event.type === "user.tool_result")) {
      if (event.tool_use_id !== first.id) continue;
      const toolStart = approvedAt ?? first.at;
      return {
        name: first.name,
        fromRunStartMs: runStart !== null && first.at !== null ? first.at - runStart : null,
        useToResultMs: toolStart !== null && time !== null ? time - toolStart : null,
        approvalWaitMs: approvedAt !== null && first.at !== null ? approvedAt - first.at : null,
      };
    }
  }
  return first ? { name: first.name, fromRunStartMs: null, useToResultMs: null, approvalWaitMs: null } : null;
}
