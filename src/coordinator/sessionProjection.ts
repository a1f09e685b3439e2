import { readToolAwaits } from "./facts/internalFacts.js";
import type { PendingAction, SessionMeter, SessionStatus, SessionUsage } from "./facts.js";
import type { TypedFact } from "./factVocabulary.js";
import { meterAfter } from "./sessionMeter.js";

/** The parts of a session row that are projections of its committed facts. */
export interface SessionProjection {
  status: SessionStatus;
  pending: PendingAction[];
  usage: SessionUsage;
  meter: SessionMeter;
}

/**
 * Folds newly committed facts into the session projection. Stores call this inside the same
 * transaction that appends the facts, so the row never disagrees with the history. `at` is the
 * commit's time (the meter's status changes take effect then).
 */
export function projectFacts(
  state: SessionProjection,
  facts: readonly TypedFact[],
  at: number,
): SessionProjection {
  let { status, pending, usage } = state;
  for (const fact of facts) {
    switch (fact.kind) {
      case "status_running":
        status = "running";
        break;
      case "status_idle":
        status = "idle";
        break;
      case "status_rescheduled":
        status = "rescheduling";
        break;
      case "status_terminated":
        status = "terminated";
        break;
      case "tool_call":
        // Client calls wait from the start; server and MCP calls only once their ticket says so.
        if (fact.call.executor === "client")
          pending = [...pending, { eventId: fact.id, kind: "client_tool_result" }];
        break;
      case "internal": {
        const awaits = readToolAwaits(fact);
        if (!awaits) break;
        const mcp = {
          ...(awaits.mcp ? { mcp: true as const } : {}),
          ...(awaits.harness ? { harness: true as const } : {}),
        };
        pending = [
          ...pending,
          awaits.answer === "confirmation"
            ? { eventId: awaits.callId, kind: "confirmation", afterAllow: awaits.afterAllow, ...mcp }
            : { eventId: awaits.callId, kind: "server_tool_result", ...mcp },
        ];
        break;
      }
      case "tool_confirmation": {
        const asked = pending.find((p) => p.eventId === fact.callId && p.kind === "confirmation");
        // Allowed for a self-hosted worker: the call now waits for its result, in its place.
        const owesResult = asked?.afterAllow === "client" && fact.allowed;
        pending = owesResult
          ? pending.map((p) =>
              p === asked ? { eventId: p.eventId, kind: "server_tool_result" as const } : p,
            )
          : pending.filter((p) => p !== asked);
        break;
      }
      case "tool_result":
        pending = pending.filter((p) => p.eventId !== fact.callId);
        break;
      case "interrupt":
        pending = [];
        break;
      // A spawned child's answer is waited for until it arrives on this (its parent's) history.
      case "thread_created":
        pending = [...pending, { eventId: fact.thread, kind: "thread_answer" }];
        break;
      case "thread_message_received":
        pending = pending.filter((p) => !(p.kind === "thread_answer" && p.eventId === fact.fromThread));
        break;
      case "model_request_end":
      // A compaction's summarization request and a grader's are model requests too: their tokens count.
      case "context_compacted":
      case "outcome_evaluation_end":
        usage = {
          inputTokens: usage.inputTokens + fact.usage.inputTokens,
          outputTokens: usage.outputTokens + fact.usage.outputTokens,
          cacheReadInputTokens: usage.cacheReadInputTokens + fact.usage.cacheReadInputTokens,
          cacheCreationInputTokens: usage.cacheCreationInputTokens + fact.usage.cacheCreationInputTokens,
        };
        break;
    }
  }
  return { status, pending, usage, meter: meterAfter(state.meter, facts, at) };
}
