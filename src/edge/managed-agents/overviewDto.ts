import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import { isoTime } from "../../kernel/clock.js";
import type { RunEnd, RunOutcome } from "./runOutcomes.js";

// The overview's aggregates, folded from committed facts read for one request: pure, so each
// figure is unit-tested without a server. Nothing here is kept between requests.

export const HOUR_MS = 3_600_000;
export const OVERVIEW_HOURS = 24;

export type HourCounts = { hour: string } & Record<RunOutcome, number>;

/** Runs ended per hour, the last `OVERVIEW_HOURS` whole hours up to the one `now` is in, oldest first. */
export function runsByHour(ends: readonly RunEnd[], now: number): HourCounts[] {
  const last = Math.floor(now / HOUR_MS) * HOUR_MS;
  const first = last - (OVERVIEW_HOURS - 1) * HOUR_MS;
  const hours: HourCounts[] = [];
  for (let at = first; at <= last; at += HOUR_MS)
    hours.push({ hour: isoTime(at), completed: 0, failed: 0, interrupted: 0, waiting: 0, other: 0 });
  for (const end of ends) {
    const index = Math.floor((end.endedAt - first) / HOUR_MS);
    const bucket = hours[index];
    if (index >= 0 && bucket) bucket[end.outcome] += 1;
  }
  return hours;
}

/** Nearest-rank percentile of `values` (ms); null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** A run's latency: from its `status_running` to its idle (a run whose start was not read has none). */
export function runLatencies(ends: readonly RunEnd[]): number[] {
  return ends.flatMap((end) => (end.startedAt === null ? [] : [end.endedAt - end.startedAt]));
}

export interface ModelTokens {
  provider: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** Tokens by provider and model from `span.model_request_end` facts, most tokens first. */
export function tokensByModel(facts: readonly CommittedTypedFact[]): ModelTokens[] {
  const byKey = new Map<string, ModelTokens>();
  for (const fact of facts) {
    if (fact.kind !== "model_request_end") continue;
    const key = JSON.stringify([fact.provider, fact.model]);
    const row = byKey.get(key) ?? {
      provider: fact.provider,
      model: fact.model,
      requests: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    };
    row.requests += 1;
    row.input_tokens += fact.usage.inputTokens;
    row.output_tokens += fact.usage.outputTokens;
    row.cache_read_input_tokens += fact.usage.cacheReadInputTokens;
    row.cache_creation_input_tokens += fact.usage.cacheCreationInputTokens;
    byKey.set(key, row);
  }
  const total = (r: ModelTokens) => r.input_tokens + r.output_tokens;
  return [...byKey.values()].sort((a, b) => total(b) - total(a));
}
