import { z } from "zod";
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { PendingAction } from "../../coordinator/facts.js";
import { sha256Hex } from "../../kernel/canonicalJson.js";
import { AwakenError } from "../../kernel/errors.js";
import type { JsonValue } from "../../kernel/json.js";
import { CHAT_LIMITS, type ChatMessage, type ChatRequest, describeIssues } from "./chatRequest.js";
import { outputToContent } from "./toolOutput.js";

/** What the session already holds that decides whether a re-sent message is new. */
export interface CommittedView {
  /** The client ids of every committed user message. */
  clientMessageIds: ReadonlySet<string>;
  /** The calls the session waits on (`session.pending`). */
  pending: readonly PendingAction[];
}

export interface ChatInputs {
  inputs: DomainInput[];
  /** The client's own tool results among `inputs`: its message already shows them. */
  clientAnswered: string[];
  /** Names this send so a retried request gets the first one's echo (null: nothing to send). */
  dedupeKey: string | null;
  /** The user message among `inputs` opens a new turn. */
  opensTurn: boolean;
}

/** Serialized tool outputs larger than this are refused (the model reads them as text). */
export const MAX_TOOL_OUTPUT_CHARS = 1_000_000;

const textPart = z.object({ type: z.literal("text"), text: z.string().max(CHAT_LIMITS.textLength) });

const toolPart = z.looseObject({
  toolCallId: z.string().min(1).max(CHAT_LIMITS.idLength),
  state: z.string(),
  output: z.unknown().optional(),
  errorText: z.string().max(CHAT_LIMITS.textLength).optional(),
  approval: z
    .looseObject({
      approved: z.boolean().optional(),
      reason: z.string().max(CHAT_LIMITS.textLength).optional(),
    })
    .optional(),
});

const NOTHING: ChatInputs = { inputs: [], clientAnswered: [], dedupeKey: null, opensTurn: false };

/**
 * Maps the re-sent list to what is new for the session, so nothing committed is entered twice:
 * the last message, when it is a user message the session has not seen, or the answers in the
 * last assistant message to calls the session still waits on (results of client tools, approval
 * responses). Everything else in the list is already history.
 */
export function chatInputs(request: ChatRequest, view: CommittedView): ChatInputs {
  if (request.trigger === "regenerate-message") {
    throw new AwakenError(
      "invalid_request",
      "Regenerating a response is not supported: the session's history is append-only. Send a new message instead.",
    );
  }
  const last = request.messages[request.messages.length - 1];
  if (!last) return NOTHING;
  if (last.role === "user") return userInputs(last, view);
  if (last.role === "assistant") return answerInputs(last, view);
  throw new AwakenError(
    "invalid_request",
    "System messages are not accepted from the chat; the agent's definition holds its system prompt.",
  );
}

function userInputs(message: ChatMessage, view: CommittedView): ChatInputs {
  if (view.clientMessageIds.has(message.id)) return NOTHING;
  // The run would only read the message after the answers, so its stream could show nothing
  // until then; the client's own rule is the same (a new message needs every tool call answered).
  const owed = view.pending.filter((p) => p.kind === "client_tool_result" || p.kind === "confirmation");
  if (owed.length > 0) {
    throw new AwakenError(
      "invalid_request",
      `The chat is waiting for ${owed.length === 1 ? "the answer to a tool call" : `the answers to ${owed.length} tool calls`} ` +
        `(${owed.map((p) => p.eventId).join(", ")}): add the tool output or the approval response before sending a new message.`,
    );
  }
  const content = message.parts.map((part, index) => {
    if (part.type !== "text") {
      throw new AwakenError(
        "invalid_request",
        `The message's part ${index} is of type ${JSON.stringify(part.type)}; only text parts are supported in a user message.`,
      );
    }
    const parsed = textPart.safeParse(part);
    if (!parsed.success) {
      throw new AwakenError(
        "invalid_request",
        `The message's part ${index}: ${describeIssues(parsed.error.issues)}`,
      );
    }
    return { type: "text", text: parsed.data.text };
  });
  if (!content.some((block) => block.text.trim() !== "")) {
    throw new AwakenError("invalid_request", "The message has no text; write something to send.");
  }
  const clientMetadata = messageMetadata(message);
  return {
    inputs: [
      {
        kind: "message",
        content,
        clientMessageId: message.id,
        ...(clientMetadata !== undefined ? { clientMetadata } : {}),
      },
    ],
    clientAnswered: [],
    dedupeKey: `ai-sdk:message:${message.id}`,
    opensTurn: true,
  };
}

/** The message's `metadata` as JSON, bounded (its re-serialization drops anything JSON cannot hold). */
function messageMetadata(message: ChatMessage): JsonValue | undefined {
  const { metadata } = message as { metadata?: unknown };
  if (metadata === undefined) return undefined;
  const serialized = JSON.stringify(metadata);
  if (serialized.length > CHAT_LIMITS.metadataLength) {
    throw new AwakenError(
      "invalid_request",
      `The message's metadata is larger than ${CHAT_LIMITS.metadataLength} characters as JSON.`,
    );
  }
  return JSON.parse(serialized) as JsonValue;
}

function answerInputs(message: ChatMessage, view: CommittedView): ChatInputs {
  const inputs: DomainInput[] = [];
  const clientAnswered: string[] = [];
  message.parts.forEach((part, index) => {
    if (!part.type.startsWith("tool-") && part.type !== "dynamic-tool") return;
    const parsed = toolPart.safeParse(part);
    if (!parsed.success) {
      throw new AwakenError(
        "invalid_request",
        `The assistant message's part ${index}: ${describeIssues(parsed.error.issues)}`,
      );
    }
    const tool = parsed.data;
    const waiting = view.pending.find((p) => p.eventId === tool.toolCallId);
    // Not waited on: answered already (this list is a re-send), or never the client's to answer.
    if (!waiting) return;
    if (waiting.kind === "confirmation") {
      if (tool.state !== "approval-responded") return;
      if (typeof tool.approval?.approved !== "boolean") {
        throw new AwakenError(
          "invalid_request",
          `The approval response for tool call ${tool.toolCallId} must say approved: true or false.`,
        );
      }
      inputs.push({
        kind: "tool_confirmation",
        callId: tool.toolCallId,
        allowed: tool.approval.approved,
        denyMessage: tool.approval.approved ? null : (tool.approval.reason ?? null),
      });
      return;
    }
    // A built-in call of a self-hosted environment owes its worker's result, not the chat's.
    if (waiting.kind !== "client_tool_result") return;
    if (tool.state === "output-available") {
      const content = outputToContent(tool.output);
      if (String(content[0]?.text ?? "").length > MAX_TOOL_OUTPUT_CHARS) {
        throw new AwakenError(
          "invalid_request",
          `The output of tool call ${tool.toolCallId} is larger than ${MAX_TOOL_OUTPUT_CHARS} characters.`,
        );
      }
      inputs.push({
        kind: "tool_result",
        callId: tool.toolCallId,
        content,
        isError: false,
        executor: "client",
      });
      clientAnswered.push(tool.toolCallId);
    } else if (tool.state === "output-error") {
      const text = tool.errorText ?? "The tool failed.";
      inputs.push({
        kind: "tool_result",
        callId: tool.toolCallId,
        content: [{ type: "text", text }],
        isError: true,
        executor: "client",
      });
      clientAnswered.push(tool.toolCallId);
    }
  });
  if (inputs.length === 0) return NOTHING;
  const answered = inputs.map((input) => ("callId" in input ? input.callId : "")).sort();
  return {
    inputs,
    clientAnswered,
    dedupeKey: `ai-sdk:answers:${sha256Hex(answered.join(","))}`,
    opensTurn: false,
  };
}
