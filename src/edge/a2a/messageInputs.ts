import type { Message, Part } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { ContentBlock } from "../../coordinator/factVocabulary.js";
import type { AskedCall } from "./taskTracker.js";

/** A message that opens a new task: its text (and data, as JSON text) becomes the user's message. */
export function newTurnInput(message: Message): DomainInput {
  const content: ContentBlock[] = message.parts.map((part) => ({ type: "text", text: partText(part) }));
  if (content.length === 0)
    throw new RequestMalformedError("message.parts is empty; send at least one text part.");
  return { kind: "message", content, ...(message.messageId ? { clientMessageId: message.messageId } : {}) };
}

/**
 * A follow-up message on an input-required task: a data part `{approved: true|false}` (with an
 * optional `reason` and `toolCallId`) answers an approval; text answers a client tool with its
 * result. Each answers the first call still asking for that kind of answer, unless it names one.
 */
export function answerInputs(message: Message, asked: readonly AskedCall[]): DomainInput[] {
  const open = [...asked];
  const take = (answer: AskedCall["answer"], callId: unknown): AskedCall | undefined => {
    const index = open.findIndex(
      (a) => a.answer === answer && (typeof callId !== "string" || a.call.id === callId),
    );
    return index < 0 ? undefined : open.splice(index, 1)[0];
  };
  const inputs: DomainInput[] = [];
  const texts: string[] = [];
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === "data" && isObject(content.value) && typeof content.value.approved === "boolean") {
      const data = content.value;
      const target = take("confirmation", data.toolCallId);
      if (!target) throw nothingToAnswer("an approval", asked);
      const reason = typeof data.reason === "string" && data.reason !== "" ? data.reason : null;
      inputs.push({
        kind: "tool_confirmation",
        callId: target.call.id,
        allowed: data.approved as boolean,
        denyMessage: data.approved ? null : reason,
      });
      continue;
    }
    texts.push(partText(part));
  }
  if (texts.length > 0) {
    const target = take("result", undefined);
    if (!target) throw nothingToAnswer("a tool result (text)", asked);
    inputs.push({
      kind: "tool_result",
      callId: target.call.id,
      content: [{ type: "text", text: texts.join("\n") }],
      isError: false,
    });
  }
  if (inputs.length === 0) throw nothingToAnswer("nothing", asked);
  return inputs;
}

function partText(part: Part): string {
  const content = part.content;
  if (content?.$case === "text") return content.value;
  if (content?.$case === "data") return JSON.stringify(content.value ?? null);
  throw new ContentTypeNotSupportedError(
    "This agent takes text and data parts only; send files as text or by reference in the text.",
  );
}

function nothingToAnswer(what: string, asked: readonly AskedCall[]): RequestMalformedError {
  const wanted = asked.map((a) =>
    a.answer === "confirmation"
      ? `an approval of ${a.call.name} (data part {approved})`
      : `${a.call.name}'s result (text)`,
  );
  return new RequestMalformedError(
    `The message carries ${what} the task does not ask for; it waits for ${wanted.join(", ") || "nothing"}.`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
