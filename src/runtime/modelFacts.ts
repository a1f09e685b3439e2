import type { Fact } from "../coordinator/facts.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelResponse, ModelUsage, ProviderError } from "../providers/ports.js";

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

/** The facts a successful model response becomes: its text as one message, each tool use on its own. */
export function responseFacts(
  response: ModelResponse,
  messageId: string,
  now: number,
): { facts: Fact[]; toolUseIds: string[] } {
  const facts: Fact[] = [];
  const toolUseIds: string[] = [];
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
    toolUseIds.push(id);
    // Only custom tools are offered to the model in this build, so every tool use is the client's
    // to answer (wire §3.4.3).
    facts.push({
      id,
      type: "agent.custom_tool_use",
      body: { name: block.name, input: block.input as JsonObject },
    });
  }
  return { facts, toolUseIds };
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
