import { isoTime } from "../../kernel/clock.js";
import type { ModelListing } from "../../providers/modelCatalogPort.js";

/**
 * A model as the SDK's `ModelInfo` has it, plus where this server sends it: `provider`
 * (`anthropic`, `openai`, `offline`, `a2a` for a remote A2A agent, or `acp` for an ACP harness) and
 * `answered_offline`. What a provider does not say
 * (capabilities, lifecycle dates) is null rather than guessed. `allowed_fallback_models` is empty:
 * this server has no Messages API, so no model takes `fallbacks` as a primary (the SDK's meaning of []).
 */
export function modelDto(m: ModelListing): Record<string, unknown> {
  return {
    type: "model",
    id: m.id,
    allowed_fallback_models: [],
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
