import type { CommittedFact } from "../coordinator/facts.js";

export type Step =
  /** A model request was started and never ended (the worker died): close its span, then go on. */
  | { kind: "close_dangling_request"; startId: string }
  /** Custom tool uses wait for client answers: park the run. */
  | { kind: "await"; eventIds: string[] }
  /**
   * There is input the model has not answered yet. `failedAttempts` counts the model errors since
   * the last answer in this turn (an idle ends a turn; queued input does not reset the count).
   */
  | { kind: "call_model"; failedAttempts: number }
  /** Nothing left to do in this turn. */
  | { kind: "finish" };

const INPUT_TYPES = new Set(["user.message", "user.custom_tool_result", "system.message"]);

/**
 * Where a run stands, decided from committed facts only. This is what makes a run resumable by
 * any worker: no decision depends on memory that a crash would lose.
 */
export function nextStep(facts: readonly CommittedFact[]): Step {
  const startedAt = new Map<string, number>();
  let danglingStart: string | null = null;
  let lastAnsweredAt = -1;
  let lastInputAt = -1;
  let errorsSinceAnswer = 0;
  const pending: string[] = [];

  for (const fact of facts) {
    switch (fact.type) {
      case "span.model_request_start":
        danglingStart = fact.id;
        startedAt.set(fact.id, fact.seq);
        break;
      case "span.model_request_end": {
        const startId = String(fact.body.model_request_start_id);
        if (danglingStart === startId) danglingStart = null;
        if (fact.body.is_error !== true) {
          // An answer covers the input committed before its request started; input that arrived
          // while the model was answering (committed before the end) still waits for a reply.
          lastAnsweredAt = Math.max(lastAnsweredAt, startedAt.get(startId) ?? fact.seq);
          errorsSinceAnswer = 0;
        }
        break;
      }
      case "session.error":
        errorsSinceAnswer += 1;
        break;
      case "session.status_idle":
        // The turn ended (answered, parked, exhausted or interrupted): the next one starts fresh.
        errorsSinceAnswer = 0;
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
        if (INPUT_TYPES.has(fact.type)) lastInputAt = fact.seq;
    }
  }
  if (danglingStart !== null) return { kind: "close_dangling_request", startId: danglingStart };
  if (pending.length > 0) return { kind: "await", eventIds: pending };
  if (lastInputAt > lastAnsweredAt) return { kind: "call_model", failedAttempts: errorsSinceAnswer };
  return { kind: "finish" };
}
