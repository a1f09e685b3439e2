/**
 * The id of the assistant message that answers a user message. One turn keeps one id, through
 * every continuation after a tool result or an approval, because the client appends a
 * continuation's parts to the message whose id the stream's `start` names; the history read
 * derives the same id, so a reloaded chat lines up with what it streamed.
 */
export function assistantMessageIdFor(userMessageFactId: string): string {
  return `asst_${userMessageFactId}`;
}

/** A turn no user message opened (a session started without one): named after its session. */
export function sessionAssistantMessageId(sessionId: string): string {
  return `asst_${sessionId}`;
}
