import type { SessionUsage } from "../coordinator/facts.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";

/** Cumulative usage of a session, summed from committed model request spans. */
export function usageTotals(facts: readonly TypedFact[]): SessionUsage {
  const total: SessionUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  for (const fact of facts) {
    if (fact.kind !== "model_request_end") continue;
    total.input_tokens += fact.usage.input_tokens;
    total.output_tokens += fact.usage.output_tokens;
    total.cache_read_input_tokens += fact.usage.cache_read_input_tokens;
    total.cache_creation_input_tokens += fact.usage.cache_creation_input_tokens;
  }
  return total;
}
