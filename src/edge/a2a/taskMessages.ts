import { type Message, Role } from "@a2a-js/sdk";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import { agentMessage, dataPart, message, textPart } from "./a2aWire.js";
import { contentText } from "./contentText.js";
import type { TaskTracker } from "./taskTracker.js";

const INPUT_PREVIEW_MAX = 500;

/**
 * A committed fact as a message of its task's history: what the user and the agent said, and each
 * tool step as a data part (`toolCall`, `toolResult`, `toolConfirmation`), so a client reading the
 * history can tell which calls were made and answered. Facts no client shows give none.
 */
export function historyMessage(fact: CommittedTypedFact, taskId: string, contextId: string): Message | null {
  switch (fact.kind) {
    case "user_message":
      return message(fact.clientMessageId ?? fact.id, taskId, contextId, Role.ROLE_USER, [
        textPart(contentText(fact.content)),
      ]);
    case "agent_message": {
      const text = contentText(fact.content);
      return text === "" ? null : agentMessage(fact.id, taskId, contextId, [textPart(text)]);
    }
    case "tool_call":
      return agentMessage(fact.id, taskId, contextId, [
        dataPart({ toolCall: { id: fact.call.id, name: fact.call.name, input: fact.call.input } }),
      ]);
    case "tool_result":
      return message(fact.id, taskId, contextId, fact.by === "client" ? Role.ROLE_USER : Role.ROLE_AGENT, [
        dataPart({
          toolResult: {
            toolCallId: fact.callId,
            isError: fact.isError,
            output: contentText(fact.content, "\n"),
          },
        }),
      ]);
    case "tool_confirmation":
      return message(fact.id, taskId, contextId, Role.ROLE_USER, [
        dataPart({
          toolConfirmation: {
            toolCallId: fact.callId,
            approved: fact.allowed,
            ...(fact.denyMessage !== null ? { reason: fact.denyMessage } : {}),
          },
        }),
      ]);
    default:
      return null;
  }
}

/**
 * The message a task's status carries: what it waits for (and how to answer) while input-required,
 * why it failed. Named after the fact that set the state, so every read names it alike.
 */
export function statusMessage(tracker: TaskTracker, taskId: string, contextId: string): Message | undefined {
  const id = `status_${tracker.stateFact?.id ?? taskId}`;
  if (tracker.state === "failed") {
    return agentMessage(id, taskId, contextId, [textPart(tracker.failure ?? "The task failed.")]);
  }
  if (tracker.state !== "input-required") return undefined;
  const lines = tracker.asked.map(({ call, answer }) =>
    answer === "confirmation"
      ? `The agent asks to run ${call.name} with ${inputPreview(call.input)}. ` +
        "Answer with a data part {approved: true|false} (and an optional reason)."
      : `The agent calls your tool ${call.name} with ${inputPreview(call.input)}. Answer with its result as text.`,
  );
  return agentMessage(id, taskId, contextId, [
    textPart(lines.join("\n")),
    dataPart({
      pendingToolCalls: tracker.asked.map(({ call, answer }) => ({
        id: call.id,
        name: call.name,
        input: call.input,
        answer: answer === "confirmation" ? "approval" : "result",
      })),
    }),
  ]);
}

function inputPreview(input: unknown): string {
  const json = JSON.stringify(input);
  return json.length > INPUT_PREVIEW_MAX ? `${json.slice(0, INPUT_PREVIEW_MAX)}…` : json;
}
