import { z } from "zod";
import { AwakenError } from "../../kernel/errors.js";

/** Bounds on what one chat request may carry (the client re-sends the whole conversation). */
export const CHAT_LIMITS = {
  idLength: 256,
  messages: 10_000,
  partsPerMessage: 1_000,
  textLength: 1_000_000,
  /** A message's `metadata`, serialized: the client's own note on it, kept with the message. */
  metadataLength: 16_384,
} as const;

const id = z.string().min(1).max(CHAT_LIMITS.idLength);

/**
 * One UI message as the client re-sends it. Only its id, role and part types are read from earlier
 * messages; the parts of the last one are read in full by `chatInputs.ts`, which knows each kind.
 */
const messageSchema = z.looseObject({
  id,
  role: z.enum(["system", "user", "assistant"]),
  parts: z
    .array(z.looseObject({ type: z.string().min(1).max(CHAT_LIMITS.idLength) }))
    .max(CHAT_LIMITS.partsPerMessage),
});

/**
 * The body `DefaultChatTransport` posts, plus this server's optional fields: which session
 * (`threadId`, else the chat `id`) and, for a chat's first message, which agent and environment
 * start it.
 */
export const chatRequestSchema = z.looseObject({
  id,
  messages: z.array(messageSchema).min(1).max(CHAT_LIMITS.messages),
  trigger: z.enum(["submit-message", "regenerate-message"]),
  messageId: id.optional(),
  threadId: id.optional(),
  agentId: id.optional(),
  environmentId: id.optional(),
});

export type ChatRequest = z.output<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest["messages"][number];

/** Parses a request body; a refusal names the field and what it expected, for the chat's error text. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AwakenError("invalid_request", "The chat request body must be a JSON object.");
  }
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new AwakenError("invalid_request", `Invalid chat request: ${describeIssues(parsed.error.issues)}`);
}

export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "body"}: ${issue.message}`)
    .join("; ");
}
