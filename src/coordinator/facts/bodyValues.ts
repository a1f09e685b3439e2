import type { JsonObject, JsonValue } from "../../kernel/json.js";
import type { SessionUsage } from "../facts.js";

// Lenient readers for stored bodies: a stored fact is never refused, a missing field reads as empty.

export function text(value: JsonValue | undefined, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

export function object(value: JsonValue | undefined): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

/** Content blocks exactly as stored (never filtered: a re-encoded fact must equal the stored one). */
export function blocks(value: JsonValue | undefined): JsonObject[] {
  return Array.isArray(value) ? (value as JsonObject[]) : [];
}

export function count(value: JsonValue | undefined): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

export function usageOf(value: JsonValue | undefined): SessionUsage {
  const u = object(value);
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cache_read_input_tokens: count(u.cache_read_input_tokens),
    cache_creation_input_tokens: count(u.cache_creation_input_tokens),
  };
}

/** Drops undefined fields, so an absent optional field stays absent in the stored body. */
export function defined(fields: Record<string, JsonValue | undefined>): JsonObject {
  const body: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
  return body;
}
