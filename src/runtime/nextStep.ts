import type { CommittedFact } from "../coordinator/facts.js";

export type Step =
  /** A model request was started and never ended (the worker died): close its span, then go on. */
  | { kind: "close_dangling_request"; startId: string }
  /** Custom tool uses wait for client answers: park the run. */
  | { kind: "await"; eventIds: string[] }
  /** There is input the model has not answered yet. `failedAttempts` counts retried errors. */
  | { kind: "call_model"; failedAttempts: number }
  /** Nothing left to do in this turn. */
  | { kind: "finish" };

const INPUT_TYPES = new Set(["user.message", "user.custom_tool_result", "system.message"]);

/**
 * Where a run stands, decided from committed facts only. This is what makes a run resumable by
 * any worker: no decision depends on memory that a crash would lose.
 */
export function nextStep(facts: readonly CommittedFact[]): Step {
  const ended = new Set<string>();
  let danglingStart: string | null = null;
  let lastAnsweredAt = -1;
  let lastInputAt = -1;
  let errorsSinceAnswer = 0;
  const pending: string[] = [];

  for (const fact of facts) {
    switch (fact.type) {
      case "span.model_request_start":
        danglingStart = fact.id;
        break;
      case "span.model_request_end": {
        const startId = String(fact.body.model_request_start_id);
        ended.add(startId);
        if (danglingStart === startId) danglingStart = null;
        if (fact.body.is_error !== true) {
          lastAnsweredAt = fact.seq;
          errorsSinceAnswer = 0;
        }
        break;
      }
      case "session.error":
        errorsSinceAnswer += 1;
        break;
      case "agent.custom_tool_use":
        pending.push(fact.id);
        break;
      case "user.custom_tool_result": {
        const index = pending.indexOf(String(fact.body.custom_tool_use_id));
        if (index >= 0) pending.splice(index, 1);
        lastInputAt = fact.seq;
        break;
      }
      case "user.interrupt":
        pending.length = 0;
        // An interrupt ends the turn: older input counts as handled.
        lastAnsweredAt = fact.seq;
        errorsSinceAnswer = 0;
        break;
      default:
        if (INPUT_TYPES.has(fact.type)) {
          lastInputAt = fact.seq;
          errorsSinceAnswer = 0;
        }
    }
  }
  if (danglingStart !== null) return { kind: "close_dangling_request", startId: danglingStart };
  if (pending.length > 0) return { kind: "await", eventIds: pending };
  if (lastInputAt > lastAnsweredAt) return { kind: "call_model", failedAttempts: errorsSinceAnswer };
  return { kind: "finish" };
}
