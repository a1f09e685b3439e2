import type { JsonObject, JsonValue } from "../../kernel/json.js";
import type { SessionUsage } from "../facts.js";
import { count, object } from "./bodyValues.js";

/**
 * Usage as stored (a `session.usage` or span fact's body, a commit's or session's usage column):
 * the model API's snake_case counters, which committed rows keep. This is the one place that maps
 * them to the domain's names; every stored encoding keeps its key order, so re-encoding a read
 * value gives back the stored bytes.
 */

/** Stored usage, read leniently: a counter left out (or not a number) is 0. */
export function decodeUsage(value: JsonValue | undefined): SessionUsage {
  const u = object(value);
  return {
    inputTokens: count(u.input_tokens),
    outputTokens: count(u.output_tokens),
    cacheReadInputTokens: count(u.cache_read_input_tokens),
    cacheCreationInputTokens: count(u.cache_creation_input_tokens),
  };
}

/** A session's total as stored (its usage column, a `session.usage` fact). */
export function encodeUsage(usage: SessionUsage): JsonObject {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
  };
}

/** A model request span's usage as stored: the span's own key order (unlike the session total's). */
export function encodeSpanUsage(usage: SessionUsage): JsonObject {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
  };
}
