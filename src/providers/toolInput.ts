/**
 * Streamed tool inputs arrive as JSON text fragments; the port promises an object. A malformed or
 * non-object input is a provider fault, classified as transient because a fresh sample usually
 * produces valid JSON.
 */
import { ProviderError } from "./ports.js";

export function parseToolInput(provider: string, toolName: string, raw: string): Record<string, unknown> {
  // Both wires send an empty string for a tool called without arguments.
  if (raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ProviderError("request_failed", `${provider} sent invalid JSON input for tool ${toolName}`, {
      transient: true,
      cause: error,
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ProviderError("request_failed", `${provider} sent a non-object input for tool ${toolName}`, {
      transient: true,
    });
  }
  return parsed as Record<string, unknown>;
}
