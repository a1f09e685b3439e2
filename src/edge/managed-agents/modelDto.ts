import { isoTime } from "../../kernel/clock.js";
import type { ModelListing } from "../../providers/modelCatalogPort.js";

/**
 * A model as the SDK's `ModelInfo` has it, plus where this server sends it: `provider`
 * (`anthropic`, `openai`, `offline`, or `a2a` for a remote A2A agent) and `answered_offline`. What a provider does not say
 * (capabilities, lifecycle dates) is null rather than guessed.
 */
export function modelDto(m: ModelListing): Record<string, unknown> {
  return {
    type: "model",
    id: m.id,
    display_name: m.displayName,
    created_at: isoTime(m.createdAt),
    capabilities: null,
    deprecated_at: null,
    lifecycle: "active",
    line: null,
    max_input_tokens: m.maxInputTokens,
    max_tokens: m.maxTokens,
    retires_at: null,
    provider: m.provider,
    answered_offline: m.provider === "offline",
  };
}
