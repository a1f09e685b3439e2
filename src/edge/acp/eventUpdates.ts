import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { WireEvent } from "./serverSessions.js";
import { contentBlockOf, resultCallId, TOOL_USE_TYPES, toolCallOf, toolResultUpdate } from "./toolCalls.js";

/**
 * The editor's updates for one committed session event: the projection both the history replay
 * (`session/load`) and a live turn use, so what a reload shows is what the turn showed. Events
 * with nothing to show (status, spans, usage, an `agent.thinking`, whose text is never stored)
 * give none.
 */
export function updatesOf(event: WireEvent): SessionUpdate[] {
  if (event.type === "user.message" || event.type === "agent.message") {
    const sessionUpdate = event.type === "user.message" ? "user_message_chunk" : "agent_message_chunk";
    const blocks = Array.isArray(event.content) ? (event.content as Array<Record<string, unknown>>) : [];
    return blocks.flatMap((block) => {
      const content = contentBlockOf(block);
      return content ? [{ sessionUpdate, content, messageId: event.id }] : [];
    });
  }
  if (TOOL_USE_TYPES.has(event.type)) return [{ sessionUpdate: "tool_call", ...toolCallOf(event) }];
  const callId = resultCallId(event);
  if (callId) return [{ sessionUpdate: "tool_call_update", ...toolResultUpdate(event, callId) }];
  return [];
}
