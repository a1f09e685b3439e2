import { z } from "zod";
import type { ModelUsage } from "../../providers/ports.js";

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * ACP's draft `usage` of a prompt response (the prompt's tokens, as claude-agent-acp reports
 * them); stable v1 has no such field, so anything else, or nothing, counts no tokens.
 */
const PromptUsage = z.object({
  inputTokens: count,
  outputTokens: count,
  cachedReadTokens: count.nullish(),
  cachedWriteTokens: count.nullish(),
});

/** The tokens a harness reports for one prompt, in the model's terms, or null when it reports none. */
export function promptUsage(response: unknown): ModelUsage | null {
  if (typeof response !== "object" || response === null || !("usage" in response)) return null;
  const parsed = PromptUsage.safeParse(response.usage);
  if (!parsed.success) return null;
  const usage = parsed.data;
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadInputTokens: usage.cachedReadTokens ?? 0,
    cacheCreationInputTokens: usage.cachedWriteTokens ?? 0,
  };
}
