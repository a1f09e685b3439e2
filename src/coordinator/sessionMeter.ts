import { requestListCost } from "../kernel/listPrices.js";
import { EMPTY_METER, type SessionMeter } from "./facts.js";
import type { CommittedTypedFact, TypedFact } from "./factVocabulary.js";

/**
 * Folds committed facts into the session meter (list cost, running time). `at` is the commit's
 * time, which every fact of one commit shares: a status change takes effect then.
 */
export function meterAfter(meter: SessionMeter, facts: readonly TypedFact[], at: number): SessionMeter {
  let { listCost, activeMs, runningSince, endedAt } = meter;
  for (const fact of facts) {
    switch (fact.kind) {
      case "model_request_end": {
        if (listCost === null) break;
        const cost = requestListCost(fact.model, fact.usage);
        listCost = cost === null ? null : (BigInt(listCost) + cost).toString();
        break;
      }
      case "status_running":
        runningSince ??= at;
        break;
      case "status_idle":
      case "status_rescheduled":
      case "status_terminated":
        if (runningSince !== null) activeMs += Math.max(0, at - runningSince);
        runningSince = null;
        if (fact.kind === "status_terminated") endedAt ??= at;
        break;
    }
  }
  return { listCost, activeMs, runningSince, endedAt };
}

/** Time spent running as of `now`: the closed stretches and the one still open. */
export function activeMsAt(meter: SessionMeter, now: number): number {
  return meter.activeMs + (meter.runningSince === null ? 0 : Math.max(0, now - meter.runningSince));
}

/** The meter of a whole history, each fact taking effect at its own commit's time. */
export function meterOfHistory(facts: readonly CommittedTypedFact[]): SessionMeter {
  let meter = EMPTY_METER;
  for (const fact of facts) meter = meterAfter(meter, [fact], fact.createdAt);
  return meter;
}
