/**
 * Where a dream's session stands, read from its committed facts alone (so any replica, after any
 * crash, reads the same): not started, running, answered (the dreamer's last message before the
 * turn ended), or ended without an answer (a failure, with a secret-free reason).
 */
import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import { textOf } from "./dreamRequest.js";
import type { DreamError } from "./ports.js";

export type DreamSessionState =
  | { kind: "pending" }
  | { kind: "running" }
  | { kind: "answered"; text: string }
  | { kind: "failed"; error: DreamError };

export function dreamSessionState(facts: readonly CommittedTypedFact[]): DreamSessionState {
  let running = false;
  let answer: string | null = null;
  let lastError: string | null = null;
  for (const fact of facts) {
    switch (fact.kind) {
      case "status_running":
        running = true;
        break;
      case "agent_message":
        answer = textOf(fact.content);
        break;
      case "error":
        lastError = fact.errorType;
        break;
      case "status_terminated":
      case "session_deleted":
        return failed("session_ended", "The dream's session ended before the dreamer answered.");
      case "status_idle": {
        const reason = fact.reason.kind;
        if (reason === "turn_ended" && answer !== null) return { kind: "answered", text: answer };
        if (reason === "retries_exhausted") {
          return failed(
            "model_error",
            `The dream's model run failed${lastError ? ` (${lastError})` : ""}; its retries are exhausted.`,
          );
        }
        if (reason === "turn_ended")
          return failed("no_output", "The dreamer ended its turn without an answer.");
        return failed("model_error", `The dream's run stopped (${reason}) before the dreamer answered.`);
      }
      default:
        break;
    }
  }
  return running ? { kind: "running" } : { kind: "pending" };
}

function failed(type: string, message: string): DreamSessionState {
  return { kind: "failed", error: { type, message } };
}
