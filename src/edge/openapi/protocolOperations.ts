import { chatRequestSchema } from "../ai-sdk/chatRequest.js";
import type { OperationSpec } from "./operationSpec.js";

/**
 * The other protocols' routes. Their bodies and streams are the protocols' own (AI SDK UI message
 * streams, AG-UI, A2A and MCP JSON-RPC), specified by those projects; this lists where they are.
 */
export const PROTOCOL_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "POST",
    path: "/v1/ai-sdk/chat",
    summary: "AI SDK useChat: send a chat's messages, read its UI message stream",
    body: chatRequestSchema,
    response: "sse",
  },
  {
    method: "GET",
    path: "/v1/ai-sdk/chat/:chatId/stream",
    summary: "AI SDK useChat: resume a chat's stream",
    response: "sse",
  },
  {
    method: "GET",
    path: "/v1/ai-sdk/threads/:sessionId/messages",
    summary: "AI SDK: a session's history as UI messages",
  },
  {
    method: "POST",
    path: "/v1/ag-ui/agents/:agentId",
    summary: "AG-UI: run an agent (RunAgentInput in, AG-UI events out)",
    body: "json",
    response: "sse",
  },
  {
    method: "GET",
    path: "/v1/a2a/agents/:agentId/.well-known/agent-card.json",
    summary: "A2A: an agent's card",
  },
  { method: "POST", path: "/v1/a2a/agents/:agentId", summary: "A2A: JSON-RPC binding", body: "json" },
  { method: "GET", path: "/v1/a2a/agents/:agentId/rest/*", summary: "A2A: HTTP+JSON binding" },
  { method: "POST", path: "/v1/a2a/agents/:agentId/rest/*", summary: "A2A: HTTP+JSON binding", body: "json" },
  { method: "DELETE", path: "/v1/a2a/agents/:agentId/rest/*", summary: "A2A: HTTP+JSON binding" },
  { method: "POST", path: "/v1/mcp", summary: "MCP Streamable HTTP: JSON-RPC messages", body: "json" },
  { method: "GET", path: "/v1/mcp", summary: "MCP Streamable HTTP: the server's stream", response: "sse" },
  { method: "DELETE", path: "/v1/mcp", summary: "MCP Streamable HTTP: end a session" },
];
