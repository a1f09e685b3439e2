import { requestListCost } from "../kernel/listPrices.js";
import { EMPTY_METER, type SessionMeter } from "./facts.js";
import type { CommittedTypedFact, TypedFact } from "./factVocabulary.js";

/**
 * Folds committed facts into the session meter (list cost, running time). `at` is the commit's
 * time, which every fact of one commit shares: a status change takes effect then.
 */
export function meterAfter(meter: SessionMeter, facts: readonly TypedFact[], at: number): SessionMeter {
  const next = { ...meter };
  for (const fact of facts) step(next, fact, at);
  return next;
}

/** One fact's effect on the meter, in place. */
function step(meter: SessionMeter, fact: TypedFact, at: number): void {
  switch (fact.kind) {
    case "model_request_end":
    // A compaction's summarization request is billed like any model request.
    case "context_compacted": {
      if (meter.listCost === null) break;
      const cost = requestListCost(fact.model, fact.usage);
      meter.listCost = cost === null ? null : (BigInt(meter.listCost) + cost).toString();
      break;
    }
    // So is a grader's; an evaluation ended without a request (an interrupt, a crash) costs nothing.
    case "outcome_evaluation_end": {
      if (meter.listCost === null || fact.model === null) break;
      const cost = requestListCost(fact.model, fact.usage);
      meter.listCost = cost === null ? null : (BigInt(meter.listCost) + cost).toString();
      break;
    }
    case "status_running":
      meter.runningSince ??= at;
      break;
    case "status_idle":
    case "status_rescheduled":
    case "status_terminated":
      if (meter.runningSince !== null) meter.activeMs += Math.max(0, at - meter.runningSince);
      meter.runningSince = null;
      if (fact.kind === "status_terminated") meter.endedAt ??= at;
      break;
  }
}

/** Time spent running as of `now`: the closed stretches and the one still open. */
export function activeMsAt(meter: SessionMeter, now: number): number {
  return meter.activeMs + (meter.runningSince === null ? 0 : Math.max(0, now - meter.runningSince));
}

/** The meter of a whole history, each fact taking effect at its own commit's time. */
export function meterOfHistory(facts: readonly CommittedTypedFact[]): SessionMeter {
  const meter = { ...EMPTY_METER };
  for (const fact of facts) step(meter, fact, fact.createdAt);
  return meter;
}
