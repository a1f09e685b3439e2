import type { AssistantMessage, Message } from "@ag-ui/core";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import { AssistantCursor } from "./assistantCursor.js";
import { contentText, toolResultText } from "./contentText.js";

/**
 * The AG-UI message list of a thread, rebuilt from committed facts only (never previews), shaped
 * exactly as the official client builds it from this edge's live events: the same ids, the same
 * grouping of calls under assistant messages, tool results right after their call's message.
 * `toolMessageIds` keeps the ids the client gave its own tool answers, so a snapshot does not
 * replace (and reorder) messages the client already holds.
 */
export function projectMessages(
  facts: readonly CommittedTypedFact[],
  toolMessageIds: ReadonlyMap<string, string> = new Map(),
): Message[] {
  const messages: Message[] = [];
  const assistants = new Map<string, AssistantMessage>();
  const cursor = new AssistantCursor();
  for (const fact of facts) {
    cursor.observe(fact);
    switch (fact.kind) {
      case "user_message":
        messages.push({
          id: fact.clientMessageId ?? fact.id,
          role: "user",
          content: contentText(fact.content),
        });
        break;
      case "system_message":
        messages.push({ id: fact.id, role: "system", content: contentText(fact.content) });
        break;
      case "agent_message": {
        const message: AssistantMessage = {
          id: fact.id,
          role: "assistant",
          content: contentText(fact.content),
        };
        assistants.set(fact.id, message);
        messages.push(message);
        break;
      }
      case "tool_call": {
        const parentId = cursor.parentFor(fact.call.id);
        let parent = assistants.get(parentId);
        if (!parent) {
          parent = { id: parentId, role: "assistant" };
          assistants.set(parentId, parent);
          messages.push(parent);
        }
        parent.toolCalls = [
          ...(parent.toolCalls ?? []),
          {
            id: fact.call.id,
            type: "function",
            function: { name: fact.call.name, arguments: JSON.stringify(fact.call.input) },
          },
        ];
        break;
      }
      case "tool_result":
        messages.push({
          id: toolMessageIds.get(fact.callId) ?? fact.id,
          role: "tool",
          toolCallId: fact.callId,
          content: toolResultText(fact.content),
        });
        break;
      default:
        break;
    }
  }
  return messages;
}
