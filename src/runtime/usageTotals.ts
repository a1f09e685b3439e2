import type { SessionUsage } from "../coordinator/facts.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";

/** Cumulative usage of a session, summed from committed model request spans and compactions. */
export function usageTotals(facts: readonly TypedFact[]): SessionUsage {
  const total: SessionUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  };
  for (const fact of facts) {
    if (fact.kind !== "model_request_end" && fact.kind !== "context_compacted") continue;
    total.inputTokens += fact.usage.inputTokens;
    total.outputTokens += fact.usage.outputTokens;
    total.cacheReadInputTokens += fact.usage.cacheReadInputTokens;
    total.cacheCreationInputTokens += fact.usage.cacheCreationInputTokens;
  }
  return total;
}
