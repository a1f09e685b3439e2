import type { SessionUsage } from "../coordinator/facts.js";
import type { CommittedTypedFact, FactPayload, TypedFact } from "../coordinator/factVocabulary.js";
import type { Activation } from "../coordinator/ports.js";
import { activeMsAt, meterOfHistory } from "../coordinator/sessionMeter.js";
import { wholeCents } from "../kernel/listPrices.js";
import { budgetInForce } from "./sessionBudget.js";

/** Cumulative usage of a session, summed from committed model request spans, compactions and graders. */
export function usageTotals(facts: readonly TypedFact[]): SessionUsage {
  const total: SessionUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  };
  for (const fact of facts) {
    if (
      fact.kind !== "model_request_end" &&
      fact.kind !== "context_compacted" &&
      fact.kind !== "outcome_evaluation_end"
    )
      continue;
    total.inputTokens += fact.usage.inputTokens;
    total.outputTokens += fact.usage.outputTokens;
    total.cacheReadInputTokens += fact.usage.cacheReadInputTokens;
    total.cacheCreationInputTokens += fact.usage.cacheCreationInputTokens;
  }
  return total;
}

/**
 * The `session.usage` snapshot a history adds up to at `now`: tokens, list cost (whole cents,
 * rounded up; absent once a model without a list price ran), running time and the budget in force.
 */
export function usageSnapshot(
  activation: Pick<Activation, "budget">,
  history: readonly CommittedTypedFact[],
  now: number,
): Extract<FactPayload, { kind: "usage" }> {
  const meter = meterOfHistory(history);
  return {
    kind: "usage",
    usage: usageTotals(history),
    ...(meter.listCost === null ? {} : { listCostCents: wholeCents(BigInt(meter.listCost)).toString() }),
    activeSeconds: activeMsAt(meter, now) / 1000,
    budget: budgetInForce(activation, history),
  };
}
