import type { SessionUsage } from "../../coordinator/facts.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import { activeMsAt } from "../../coordinator/sessionMeter.js";
import { monetaryAmount, wholeCents } from "../../kernel/listPrices.js";

/**
 * Cumulative usage as the wire reports it (SDK `BetaManagedAgentsSessionUsage` and the `session.usage`
 * snapshot): cache writes are broken down by TTL under `cache_creation`. The product records one
 * total; it never asks for the 1-hour TTL, so every cache write is a 5-minute one. The flat
 * `cache_creation_input_tokens` total stays alongside for existing readers (the SDK ignores it).
 */
export function usageDto(usage: SessionUsage): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheCreationInputTokens,
      ephemeral_1h_input_tokens: 0,
    },
  };
}

/**
 * A session's `usage`: its committed token totals, the time it ran and its list cost (whole US
 * cents, rounded up; null once a model without a list price ran, which nothing can measure).
 */
export function sessionUsageDto(s: SessionRecord, now: number): Record<string, unknown> {
  return {
    ...usageDto(s.usage),
    active_seconds: activeSecondsOf(s, now),
    list_cost: s.meter.listCost === null ? null : monetaryAmount(wholeCents(BigInt(s.meter.listCost))),
  };
}

/**
 * A session's `stats`: the time it spent running (its one thread's), and its age, which stops
 * growing when it terminates.
 */
export function sessionStatsDto(s: SessionRecord, now: number): Record<string, unknown> {
  const end = s.meter.endedAt ?? s.archivedAt ?? now;
  return {
    active_seconds: activeSecondsOf(s, now),
    duration_seconds: Math.max(0, Math.round((end - s.createdAt) / 1000)),
  };
}

/** Seconds in `running` status as of `now` (an open stretch counts up to now), to the millisecond. */
function activeSecondsOf(s: SessionRecord, now: number): number {
  return activeMsAt(s.meter, s.meter.endedAt ?? now) / 1000;
}
