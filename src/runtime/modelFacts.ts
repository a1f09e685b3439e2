import type { Fact } from "../coordinator/facts.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelResponse, ModelUsage, ProviderError } from "../providers/ports.js";
import type { CatalogEntry } from "./toolCatalog.js";

export interface ModelSpan {
  startId: string;
  provider: string;
  model: string;
}

export function spanStart(span: ModelSpan): Fact {
  return {
    id: span.startId,
    type: "span.model_request_start",
    body: { provider: span.provider, model: span.model },
  };
}

export function spanEnd(span: ModelSpan, now: number, usage: ModelUsage | null, isError: boolean): Fact {
  return {
    id: newId("sevt", now),
    type: "span.model_request_end",
    body: {
      model_request_start_id: span.startId,
      is_error: isError,
      provider: span.provider,
      model: span.model,
      model_usage: {
        input_tokens: usage?.input_tokens ?? 0,
        output_tokens: usage?.output_tokens ?? 0,
        cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
      },
    },
  };
}

/**
 * The facts a successful model response becomes: its text as one message, each tool use on its own.
 * A Hand tool becomes `agent.tool_use` (the server runs it; wire §3.4 case 1) with the permission
 * the catalog evaluated; anything else is `agent.custom_tool_use`, the client's to answer.
 */
export function responseFacts(
  response: ModelResponse,
  messageId: string,
  now: number,
  catalog: ReadonlyMap<string, CatalogEntry>,
): { facts: Fact[]; customToolUseIds: string[]; handToolUseIds: string[] } {
  const facts: Fact[] = [];
  const customToolUseIds: string[] = [];
  const handToolUseIds: string[] = [];
  const text = response.content.filter((b) => b.type === "text" && b.text !== "");
  if (text.length > 0) {
    facts.push({
      id: messageId,
      type: "agent.message",
      body: { content: text.map((b) => ({ ...b })) as JsonObject[] },
    });
  }
  for (const block of response.content) {
    if (block.type !== "tool_use") continue;
    const id = newId("sevt", now);
    const entry = catalog.get(block.name);
    if (entry?.kind === "hand") {
      handToolUseIds.push(id);
      facts.push({
        id,
        type: "agent.tool_use",
        body: {
          name: block.name,
          input: block.input as JsonObject,
          evaluated_permission: "allow",
          evaluation: { type: entry.policy.type },
        },
      });
    } else {
      customToolUseIds.push(id);
      facts.push({
        id,
        type: "agent.custom_tool_use",
        body: { name: block.name, input: block.input as JsonObject },
      });
    }
  }
  return { facts, customToolUseIds, handToolUseIds };
}

export function providerErrorType(error: ProviderError | null): string {
  if (!error) return "unknown_error";
  if (error.kind === "overloaded") return "model_overloaded_error";
  if (error.kind === "rate_limited") return "model_rate_limited_error";
  return "model_request_failed_error";
}

export function sessionError(
  now: number,
  type: string,
  message: string,
  retryStatus: "retrying" | "exhausted" | "terminal",
): Fact {
  return {
    id: newId("sevt", now),
    type: "session.error",
    body: { error: { type, message, retry_status: { type: retryStatus } } },
  };
}

export function statusFact(now: number, type: string, body: JsonObject = {}): Fact {
  return { id: newId("sevt", now), type, body };
}

export function idle(now: number, stopReason: JsonObject): Fact {
  return statusFact(now, "session.status_idle", { stop_reason: stopReason, stop_details: null });
}
