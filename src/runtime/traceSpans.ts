/**
 * The runtime's spans, named and attributed per the OpenTelemetry GenAI semantic conventions: a
 * `chat {model}` client span per model request and an `execute_tool {tool}` span per tool call the
 * server runs. Only names, counts and outcomes: never a prompt, an answer, a tool input or output.
 */

import type { TraceSpan, Tracing } from "../kernel/tracing.js";
import type { ModelResponse } from "../providers/ports.js";

export function startModelSpan(
  tracing: Tracing | undefined,
  provider: string,
  model: string,
  maxTokens: number,
  sessionId: string,
): TraceSpan | undefined {
  return tracing?.startSpan(`chat ${model}`, "client", {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": model,
    "gen_ai.request.max_tokens": maxTokens,
    "gen_ai.conversation.id": sessionId,
  });
}

/** Ends a model span that answered, with the usage the provider reported. */
export function endModelSpan(span: TraceSpan, response: ModelResponse): void {
  span.setAttributes({
    "gen_ai.usage.input_tokens": response.usage.input_tokens,
    "gen_ai.usage.output_tokens": response.usage.output_tokens,
    "gen_ai.usage.cache_read.input_tokens": response.usage.cache_read_input_tokens,
    "gen_ai.usage.cache_creation.input_tokens": response.usage.cache_creation_input_tokens,
    "gen_ai.response.finish_reasons": [response.stopReason],
  });
  span.end();
}

/** `type`: `function` for a built-in (Hand) tool, `extension` for an MCP server's. */
export function startToolSpan(
  tracing: Tracing | undefined,
  tool: string,
  type: "function" | "extension",
  callId: string,
): TraceSpan | undefined {
  return tracing?.startSpan(`execute_tool ${tool}`, "internal", {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "gen_ai.tool.type": type,
    "gen_ai.tool.call.id": callId,
  });
}

/** Ends a tool span with its outcome (`ok`, `error`, `aborted`); a failed call marks it failed. */
export function endToolSpan(span: TraceSpan | undefined, outcome: "ok" | "error" | "aborted"): void {
  if (!span) return;
  span.setAttributes({ "awaken.tool.outcome": outcome });
  span.end(outcome === "ok" ? undefined : outcome === "error" ? "tool_error" : "aborted");
}
