/** The output budget of a model request when neither the agent nor the model catalog says otherwise. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The agent metadata key that sets its requests' `max_tokens` (metadata values are strings). */
export const MAX_TOKENS_METADATA_KEY = "awaken.max_tokens";

/** Whether the agent sets its requests' `max_tokens` (the only case the model's limit is read for). */
export function hasMaxTokensSetting(metadata: Readonly<Record<string, string>>): boolean {
  return metadata[MAX_TOKENS_METADATA_KEY] !== undefined;
}

/**
 * A model request's `max_tokens`: the agent's `awaken.max_tokens` metadata when it is a positive
 * integer (capped at what the model accepts, when the provider's model list knows it), else 4096
 * (or the model's limit when only that is given). A malformed setting is ignored, never sent.
 */
export function maxOutputTokens(
  metadata: Readonly<Record<string, string>>,
  modelLimit: number | null,
): number {
  const raw = metadata[MAX_TOKENS_METADATA_KEY];
  const setting = raw !== undefined && /^[1-9][0-9]{0,8}$/.test(raw.trim()) ? Number(raw.trim()) : null;
  if (setting !== null) return modelLimit !== null ? Math.min(setting, modelLimit) : setting;
  return modelLimit ?? DEFAULT_MAX_OUTPUT_TOKENS;
}
