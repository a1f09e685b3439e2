import type { UIMessage } from "ai";
import type { CommittedTypedFact, ContentBlock } from "../../coordinator/factVocabulary.js";
import { assistantMessageIdFor, sessionAssistantMessageId } from "./assistantMessageId.js";
import { contentText, contentToOutput } from "./toolOutput.js";

type Part = UIMessage["parts"][number];
/** A tool part while the history is folded: its state moves as the call's facts arrive. */
type ToolPart = Record<string, unknown> & { state: string };

/** Where the session's latest turn begins: the user message that opened it (null before any). */
export interface TurnStart {
  assistantMessageId: string;
  /** The seq of the user message; a replay of the turn reads what came after it. */
  seq: number;
}

export function latestTurn(facts: readonly CommittedTypedFact[], sessionId: string): TurnStart {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind === "user_message")
      return { assistantMessageId: assistantMessageIdFor(fact.id), seq: fact.seq };
  }
  return { assistantMessageId: sessionAssistantMessageId(sessionId), seq: 0 };
}

/**
 * The chat as UI messages, rebuilt from committed facts only: each user message (under the id its
 * client gave it), then one assistant message per turn holding the turn's steps, text and tool
 * parts in their final states — the same message the live stream built.
 */
export function historyMessages(facts: readonly CommittedTypedFact[], sessionId: string): UIMessage[] {
  const messages: UIMessage[] = [];
  const tools = new Map<string, ToolPart>();
  let assistantId = sessionAssistantMessageId(sessionId);
  let assistant: UIMessage | null = null;
  const parts = (): Part[] => {
    if (!assistant) {
      assistant = { id: assistantId, role: "assistant", parts: [] };
      messages.push(assistant);
    }
    return assistant.parts;
  };

  for (const fact of facts) {
    switch (fact.kind) {
      case "user_message":
        messages.push({
          id: fact.clientMessageId ?? fact.id,
          role: "user",
          ...(fact.clientMetadata !== undefined ? { metadata: fact.clientMetadata } : {}),
          parts: userParts(fact.content),
        });
        assistantId = assistantMessageIdFor(fact.id);
        assistant = null;
        break;
      case "model_request_start":
        parts().push({ type: "step-start" });
        break;
      case "agent_message": {
        const text = contentText(fact.content);
        if (text !== "") parts().push({ type: "text", text, state: "done" });
        break;
      }
      case "tool_call": {
        const { call } = fact;
        const asks = call.permission?.decision === "ask";
        const part: ToolPart = {
          type: `tool-${call.name}`,
          toolCallId: call.id,
          state: asks ? "approval-requested" : "input-available",
          input: call.input,
          ...(call.executor === "client" ? {} : { providerExecuted: true }),
          ...(asks ? { approval: { id: call.id } } : {}),
        };
        tools.set(call.id, part);
        parts().push(part as unknown as Part);
        break;
      }
      case "tool_confirmation": {
        const part = tools.get(fact.callId);
        if (!part) break;
        part.approval = {
          id: fact.callId,
          approved: fact.allowed,
          ...(fact.denyMessage !== null ? { reason: fact.denyMessage } : {}),
        };
        part.state = fact.allowed ? "approval-responded" : "output-denied";
        break;
      }
      case "tool_result": {
        const part = tools.get(fact.callId);
        // A denial's result restates the denial: the part stays denied.
        if (!part || part.state === "output-denied") break;
        if (fact.isError) {
          part.state = "output-error";
          part.errorText = contentText(fact.content);
        } else {
          part.state = "output-available";
          part.output = contentToOutput(fact.content, fact.by);
        }
        break;
      }
      default:
        break;
    }
  }
  return messages;
}

function userParts(content: readonly ContentBlock[]): Part[] {
  return content.flatMap((block): Part[] =>
    block.type === "text" && typeof block.text === "string" ? [{ type: "text", text: block.text }] : [],
  );
}
