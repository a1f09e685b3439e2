import type { SessionMeter, SessionUsage } from "../../coordinator/facts.js";
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
  return meteredUsageDto(s.usage, s.meter, now);
}

/** The same figures for any run sequence with a meter: a session, or one of its threads. */
export function meteredUsageDto(
  usage: SessionUsage,
  meter: SessionMeter,
  now: number,
): Record<string, unknown> {
  return {
    ...usageDto(usage),
    active_seconds: activeSecondsOf(meter, now),
    list_cost: meter.listCost === null ? null : monetaryAmount(wholeCents(BigInt(meter.listCost))),
  };
}

/**
 * A session's `stats`: the time it spent running (its one thread's), and its age, which stops
 * growing when it terminates.
 */
export function sessionStatsDto(s: SessionRecord, now: number): Record<string, unknown> {
  const end = s.meter.endedAt ?? s.archivedAt ?? now;
  return {
    active_seconds: activeSecondsOf(s.meter, now),
    duration_seconds: Math.max(0, Math.round((end - s.createdAt) / 1000)),
  };
}

/** Seconds in `running` status as of `now` (an open stretch counts up to now), to the millisecond. */
export function activeSecondsOf(meter: SessionMeter, now: number): number {
  return activeMsAt(meter, meter.endedAt ?? now) / 1000;
}
