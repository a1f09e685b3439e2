import type { CommittedFact, SessionUsage } from "../coordinator/facts.js";

/** Cumulative usage of a session, summed from committed model request spans. */
export function usageTotals(facts: readonly CommittedFact[]): SessionUsage {
  const total: SessionUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  for (const fact of facts) {
    if (fact.type !== "span.model_request_end") continue;
    const u = fact.body.model_usage;
    if (!u || typeof u !== "object" || Array.isArray(u)) continue;
    total.input_tokens += Number(u.input_tokens ?? 0);
    total.output_tokens += Number(u.output_tokens ?? 0);
    total.cache_read_input_tokens += Number(u.cache_read_input_tokens ?? 0);
    total.cache_creation_input_tokens += Number(u.cache_creation_input_tokens ?? 0);
  }
  return total;
}
