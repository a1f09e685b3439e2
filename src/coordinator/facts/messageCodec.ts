import type { Fact } from "../facts.js";
import type { TypedFact } from "../factVocabulary.js";
import { blocks, defined, text } from "./bodyValues.js";
import { STORED_TYPE } from "./storedTypes.js";

type Of<K extends TypedFact["kind"]> = Extract<TypedFact, { kind: K }>;
export type MessageFact = Of<
  "user_message" | "system_message" | "agent_message" | "agent_thinking" | "interrupt"
>;

/** The product's key for a UI client's message id: no protocol field of this name exists. */
const CLIENT_MESSAGE_ID = "awaken_client_message_id";
/** The product's key for the metadata a UI client put on its message. */
const CLIENT_METADATA = "awaken_client_metadata";

export const messageDecoders: Record<string, (f: Fact) => MessageFact> = {
  [STORED_TYPE.user_message]: ({ id, body }) => {
    const clientMessageId = body[CLIENT_MESSAGE_ID];
    const clientMetadata = body[CLIENT_METADATA];
    return {
      id,
      kind: "user_message",
      content: blocks(body.content),
      ...(typeof clientMessageId === "string" ? { clientMessageId } : {}),
      ...(clientMetadata !== undefined ? { clientMetadata } : {}),
    };
  },
  [STORED_TYPE.system_message]: ({ id, body }) => ({
    id,
    kind: "system_message",
    content: blocks(body.content),
  }),
  [STORED_TYPE.agent_message]: ({ id, body }) => ({
    id,
    kind: "agent_message",
    content: blocks(body.content),
  }),
  [STORED_TYPE.agent_thinking]: ({ id }) => ({ id, kind: "agent_thinking" }),
  [STORED_TYPE.interrupt]: ({ id, body }) =>
    typeof body.session_thread_id === "string"
      ? { id, kind: "interrupt", targetThread: text(body.session_thread_id) }
      : { id, kind: "interrupt" },
};

export function encodeMessage(f: MessageFact): Fact {
  switch (f.kind) {
    case "user_message":
      return {
        id: f.id,
        type: STORED_TYPE.user_message,
        body: defined({
          content: f.content,
          [CLIENT_MESSAGE_ID]: f.clientMessageId,
          [CLIENT_METADATA]: f.clientMetadata,
        }),
      };
    case "system_message":
      return { id: f.id, type: STORED_TYPE.system_message, body: { content: f.content } };
    case "agent_message":
      return { id: f.id, type: STORED_TYPE.agent_message, body: { content: f.content } };
    case "agent_thinking":
      return { id: f.id, type: STORED_TYPE.agent_thinking, body: {} };
    case "interrupt":
      return { id: f.id, type: STORED_TYPE.interrupt, body: defined({ session_thread_id: f.targetThread }) };
  }
}
