import Anthropic from "@anthropic-ai/sdk";
import { apiBase } from "./consoleBase.js";

/**
 * The official SDK, pointed at this server's public API: the Console uses no endpoint a client
 * could not. The key is the operator's own, typed into this tab, so the browser may hold it.
 */
export function apiClient(apiKey: string): Anthropic {
  return new Anthropic({
    apiKey,
    baseURL: apiBase(),
    dangerouslyAllowBrowser: true,
    // A console shows a failure at once and lets the operator retry; the SDK would hide it behind retries.
    maxRetries: 0,
  });
}

/** The message of an API failure, as the server worded it. */
export function problemOf(error: unknown): string {
  if (error instanceof Anthropic.APIError) {
    const body = error.error as { error?: { message?: string } } | undefined;
    return body?.error?.message ?? error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
