import type { Fact, PendingAction, SessionStatus, SessionUsage } from "./facts.js";

/** The parts of a session row that are projections of its committed facts. */
export interface SessionProjection {
  status: SessionStatus;
  pending: PendingAction[];
  usage: SessionUsage;
}

/**
 * Folds newly committed facts into the session projection. Stores call this inside the same
 * transaction that appends the facts, so the row never disagrees with the history.
 */
export function projectFacts(state: SessionProjection, facts: readonly Fact[]): SessionProjection {
  let { status, pending, usage } = state;
  for (const fact of facts) {
    switch (fact.type) {
      case "session.status_running":
        status = "running";
        break;
      case "session.status_idle":
        status = "idle";
        break;
      case "session.status_rescheduled":
        status = "rescheduling";
        break;
      case "session.status_terminated":
        status = "terminated";
        break;
      case "agent.custom_tool_use":
        pending = [...pending, { eventId: fact.id, kind: "custom_tool_result" }];
        break;
      case "user.custom_tool_result": {
        const answered = fact.body.custom_tool_use_id;
        pending = pending.filter((p) => p.eventId !== answered);
        break;
      }
      case "user.interrupt":
        pending = [];
        break;
      case "span.model_request_end": {
        const u = fact.body.model_usage;
        if (u && typeof u === "object" && !Array.isArray(u)) {
          usage = {
            input_tokens: usage.input_tokens + num(u.input_tokens),
            output_tokens: usage.output_tokens + num(u.output_tokens),
            cache_read_input_tokens: usage.cache_read_input_tokens + num(u.cache_read_input_tokens),
            cache_creation_input_tokens:
              usage.cache_creation_input_tokens + num(u.cache_creation_input_tokens),
          };
        }
        break;
      }
    }
  }
  return { status, pending, usage };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
