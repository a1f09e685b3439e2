import {
  type Fact,
  type PendingAction,
  type SessionStatus,
  type SessionUsage,
  TOOL_AWAITS,
} from "./facts.js";

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
      case TOOL_AWAITS: {
        const kind = fact.body.answer === "tool_confirmation" ? "tool_confirmation" : "tool_result";
        const afterAllow = fact.body.after_allow === "tool_result" ? "tool_result" : "server";
        const mcp = fact.body.mcp === true ? { mcp: true as const } : {};
        pending = [
          ...pending,
          kind === "tool_confirmation"
            ? { eventId: String(fact.body.tool_use_id), kind, afterAllow, ...mcp }
            : { eventId: String(fact.body.tool_use_id), kind, ...mcp },
        ];
        break;
      }
      case "user.tool_confirmation": {
        const id = fact.body.tool_use_id;
        const asked = pending.find((p) => p.eventId === id && p.kind === "tool_confirmation");
        // Allowed for a self-hosted worker: the call now waits for its result, in its place.
        const owesResult = asked?.afterAllow === "tool_result" && fact.body.result === "allow";
        pending = owesResult
          ? pending.map((p) => (p === asked ? { eventId: p.eventId, kind: "tool_result" as const } : p))
          : pending.filter((p) => p !== asked);
        break;
      }
      case "user.tool_result":
      case "agent.tool_result": {
        const answered = fact.body.tool_use_id;
        pending = pending.filter((p) => p.eventId !== answered);
        break;
      }
      case "agent.mcp_tool_result": {
        const answered = fact.body.mcp_tool_use_id;
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
