/**
 * Model ids the providers publish (and the built-in ones), known at build time: the only model
 * ids a metric label may carry. A model id is the agent author's free text, and `/metrics` is read
 * without authentication unless the operator sets a token, so an id outside this list is counted as
 * "other": no tenant's naming
 * reaches another reader, and no tenant can grow the series. A model released later counts as
 * "other" until it is added here.
 */
export const PUBLISHED_MODEL_IDS: ReadonlySet<string> = new Set([
  // Built in: the offline model and remote A2A agents (counted as one).
  "offline",
  "a2a",
  // Anthropic Messages API: aliases and dated snapshots.
  "claude-opus-4-6",
  "claude-sonnet-4-6",
  "claude-opus-4-5",
  "claude-opus-4-5-20251101",
  "claude-haiku-4-5",
  "claude-haiku-4-5-20251001",
  "claude-sonnet-4-5",
  "claude-sonnet-4-5-20250929",
  "claude-opus-4-1",
  "claude-opus-4-1-20250805",
  "claude-opus-4-0",
  "claude-opus-4-20250514",
  "claude-sonnet-4-0",
  "claude-sonnet-4-20250514",
  "claude-3-7-sonnet-latest",
  "claude-3-7-sonnet-20250219",
  "claude-3-5-haiku-latest",
  "claude-3-5-haiku-20241022",
  "claude-3-haiku-20240307",
  // OpenAI chat completions: the families the router sends there.
  "gpt-5.2",
  "gpt-5.1",
  "gpt-5",
  "gpt-5-mini",
  "gpt-5-nano",
  "gpt-4.1",
  "gpt-4.1-mini",
  "gpt-4.1-nano",
  "gpt-4o",
  "gpt-4o-mini",
  "o4-mini",
  "o3",
  "o3-mini",
  "o1",
]);

/** The providers a metric label may name (the router's and the A2A delegate's). */
export const METRIC_PROVIDERS: ReadonlySet<string> = new Set(["anthropic", "openai", "offline", "a2a"]);
