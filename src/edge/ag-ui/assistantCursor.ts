import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";

/**
 * Which AG-UI assistant message a tool call belongs to. The official client files a call under
 * the message `parentMessageId` names (creating it, under that id, when absent), so the snapshot
 * and the live stream must group calls the same way: a call joins the text the same model answer
 * produced, or opens a message of its own under the first call's id.
 */
export class AssistantCursor {
  private current: string | null = null;

  /** A fact the history moves through; answers and new requests start a new assistant message. */
  observe(fact: CommittedTypedFact): void {
    switch (fact.kind) {
      case "agent_message":
        this.current = fact.id;
        return;
      case "user_message":
      case "system_message":
      case "tool_result":
      case "model_request_start":
      case "status_running":
      case "status_idle":
        this.current = null;
        return;
      default:
        return;
    }
  }

  /** Streamed text opens the message its committed fact will be. */
  textStarted(messageId: string): void {
    this.current = messageId;
  }

  /** Streamed text that will never commit no longer holds calls. */
  textAbandoned(messageId: string): void {
    if (this.current === messageId) this.current = null;
  }

  /** The message id a call is filed under; a call with no text before it opens one. */
  parentFor(callId: string): string {
    if (this.current === null) this.current = callId;
    return this.current;
  }
}
