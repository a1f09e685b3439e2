import type { SessionUsage } from "../../coordinator/facts.js";

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
