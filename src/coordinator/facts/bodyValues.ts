import type { JsonObject, JsonValue } from "../../kernel/json.js";

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

/** Drops undefined fields, so an absent optional field stays absent in the stored body. */
export function defined(fields: Record<string, JsonValue | undefined>): JsonObject {
  const body: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
  return body;
}
