/**
 * What a delegate turn needs to know, read from committed facts only: which remote task answers
 * which of our inputs (`awaken.a2a_task`, committed as soon as the remote names the task, before
 * anything else can be lost), which call our session parks on while the remote task asks for input,
 * and what the next message to the remote agent is. A restarted worker decides from these alone.
 */

import type { CommittedTypedFact, ContentBlock, TypedFact } from "../../coordinator/factVocabulary.js";
import type { JsonObject } from "../../kernel/json.js";

/** Internal fact: the remote agent took message `message_id` as task `task_id` in `context_id`. */
export const A2A_TASK = "awaken.a2a_task";

/**
 * The client call a session parks on while the remote task is `input-required`: its input names
 * the remote task and carries the remote's question; its result is sent back to that task.
 */
export const A2A_INPUT_TOOL = "a2a_input_required";

export interface RemoteTask {
  taskId: string;
  contextId: string;
  messageId: string;
}

export function remoteTaskFact(id: string, task: RemoteTask): TypedFact {
  return {
    id,
    kind: "internal",
    type: A2A_TASK,
    body: { task_id: task.taskId, context_id: task.contextId, message_id: task.messageId },
  };
}

function readRemoteTask(fact: CommittedTypedFact): RemoteTask | null {
  if (fact.kind !== "internal" || fact.type !== A2A_TASK) return null;
  const { task_id, context_id, message_id } = fact.body;
  if (typeof task_id !== "string" || typeof context_id !== "string" || typeof message_id !== "string")
    return null;
  return { taskId: task_id, contextId: context_id, messageId: message_id };
}

/** One part of the message to the remote agent (the SDK's part shapes are built by the caller). */
export type OutgoingPart = { kind: "text"; text: string } | { kind: "data"; value: JsonObject };

export interface DelegateTurn {
  /** Derived from our session and the input it answers: the same after any crash or retry. */
  messageId: string;
  parts: OutgoingPart[];
  /** The remote task this message answers (its `input-required`), or "" for a new task. */
  taskId: string;
  /** The remote context (set after our first turn), or "" for a new one. */
  contextId: string;
  /** The remote already took this message: follow that task, never send again. */
  recorded: RemoteTask | null;
  /** For a new task: the context's previous task, which a cancelled turn may have left open. */
  previous: RemoteTask | null;
}

/**
 * The next message of a delegate turn: every input not answered yet (as `nextStep` counts them:
 * after the last answered request or interrupt). An answer to the remote's question goes to the
 * same remote task; anything else opens a new task in the session's remote context.
 */
export function delegateTurn(facts: readonly CommittedTypedFact[], sessionId: string): DelegateTurn | null {
  const startedAt = new Map<string, number>();
  const recorded = new Map<string, RemoteTask>();
  const inputCalls = new Map<string, { taskId: string; contextId: string }>();
  let last: RemoteTask | null = null;
  let answeredAt = -1;
  for (const fact of facts) {
    const task = readRemoteTask(fact);
    if (task) {
      recorded.set(task.messageId, task);
      last = task;
      continue;
    }
    if (fact.kind === "model_request_start") startedAt.set(fact.id, fact.contextSeq ?? fact.seq);
    else if (fact.kind === "model_request_end" && !fact.isError)
      answeredAt = Math.max(answeredAt, startedAt.get(fact.startId) ?? fact.seq);
    else if (fact.kind === "interrupt") answeredAt = fact.seq;
    else if (
      fact.kind === "tool_call" &&
      fact.call.executor === "client" &&
      fact.call.name === A2A_INPUT_TOOL
    ) {
      const { task_id, context_id } = fact.call.input;
      if (typeof task_id === "string" && typeof context_id === "string")
        inputCalls.set(fact.id, { taskId: task_id, contextId: context_id });
    }
  }
  const pending = facts.filter(
    (f) =>
      f.seq > answeredAt &&
      (f.kind === "user_message" || (f.kind === "tool_result" && inputCalls.has(f.callId))),
  );
  const lastInput = pending.at(-1);
  if (!lastInput) return null;
  const parts: OutgoingPart[] = [];
  let answers: { taskId: string; contextId: string } | null = null;
  for (const fact of pending) {
    if (fact.kind === "tool_result") {
      answers ??= inputCalls.get(fact.callId) ?? null;
      parts.push(...answerParts(fact.content));
    } else if (fact.kind === "user_message") {
      parts.push(...fact.content.map(textPart));
    }
  }
  const messageId = `awaken-${sessionId}-${lastInput.id}`;
  return {
    messageId,
    parts: parts.length > 0 ? parts : [{ kind: "text", text: "" }],
    taskId: answers?.taskId ?? "",
    contextId: answers?.contextId ?? last?.contextId ?? "",
    recorded: recorded.get(messageId) ?? null,
    previous: answers ? null : last,
  };
}

/**
 * A result the user gave for the remote's question: JSON `{"approved": true|false, …}` answers a
 * confirmation the remote asks for (a data part); anything else is text.
 */
function answerParts(content: readonly ContentBlock[]): OutgoingPart[] {
  const text = content.map((block) => textPart(block).text).join("\n");
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value) && "approved" in value) {
      if (typeof (value as JsonObject).approved === "boolean")
        return [{ kind: "data", value: value as JsonObject }];
    }
  } catch {
    // Not JSON: plain text.
  }
  return [{ kind: "text", text }];
}

function textPart(block: ContentBlock): { kind: "text"; text: string } {
  if (block.type === "text" && typeof block.text === "string") return { kind: "text", text: block.text };
  return { kind: "text", text: `[${String(block.type ?? "unknown")} content omitted]` };
}
