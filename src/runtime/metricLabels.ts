import type { ModelTokens } from "../kernel/metrics.js";
import type { ModelResponse, ModelUsage } from "../providers/ports.js";
import { METRIC_PROVIDERS, PUBLISHED_MODEL_IDS } from "../providers/publishedModels.js";
import type { CatalogEntry } from "./toolCatalog.js";

/**
 * The metric label of each call in a model answer that the client runs: a built-in tool keeps its
 * (fixed) name, anything else is "custom", since custom tool names are the agent author's free text.
 */
export function delegatedToolLabels(
  response: ModelResponse,
  catalog: ReadonlyMap<string, CatalogEntry>,
): string[] {
  return response.content.flatMap((block) => {
    if (block.type !== "tool_use") return [];
    const entry = catalog.get(block.name);
    if (
      entry?.kind === "mcp" ||
      entry?.kind === "runtime" ||
      (entry?.kind === "hand" && entry.runsOn === "server")
    )
      return [];
    return [entry?.kind === "hand" ? block.name : "custom"];
  });
}

/** A provider's usage report as the metrics port counts it. */
export function modelTokens(usage: ModelUsage): ModelTokens {
  return {
    input: usage.inputTokens,
    output: usage.outputTokens,
    cacheRead: usage.cacheReadInputTokens,
    cacheCreation: usage.cacheCreationInputTokens,
  };
}

/** A model request's metric labels: a published model id keeps its name, any other is "other". */
export function modelMetricLabels(provider: string, model: string): { provider: string; model: string } {
  return {
    provider: METRIC_PROVIDERS.has(provider) ? provider : "other",
    model: PUBLISHED_MODEL_IDS.has(model) ? model : "other",
  };
}
