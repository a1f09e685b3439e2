/**
 * The runtime's spans, named and attributed per the OpenTelemetry GenAI semantic conventions: a
 * `chat {model}` client span per model request and an `execute_tool {tool}` span per tool call the
 * server runs. Names, counts and outcomes; content only when the run captures it
 * (`RunContext.capturesContent`: the operator's ceiling, the session's request and its subject's
 * consent), through the `capture*` helpers below, each attribute capped at 16 KiB.
 */

import type { CommittedTypedFact, ContentBlock } from "../coordinator/factVocabulary.js";
import { cappedJson, cappedText } from "../kernel/contentCapture.js";
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
    "gen_ai.usage.input_tokens": response.usage.inputTokens,
    "gen_ai.usage.output_tokens": response.usage.outputTokens,
    "gen_ai.usage.cache_read.input_tokens": response.usage.cacheReadInputTokens,
    "gen_ai.usage.cache_creation.input_tokens": response.usage.cacheCreationInputTokens,
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

/** The text blocks of some content, one per line; other blocks (images, documents) are left out. */
function textOf(content: readonly ContentBlock[]): string {
  return content
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("\n");
}

/**
 * `gen_ai.input.messages`: the last user turn's text, from the committed history (what the client
 * sent), as the GenAI conventions' message list. Nothing when the history has no user message.
 */
export function captureModelInput(span: TraceSpan | undefined, facts: readonly CommittedTypedFact[]): void {
  if (!span) return;
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind !== "user_message") continue;
    span.setAttributes({
      "gen_ai.input.messages": cappedJson(textOf(fact.content), (content) => [
        { role: "user", parts: [{ type: "text", content }] },
      ]),
    });
    return;
  }
}

/** `gen_ai.output.messages`: the answer's text, as the GenAI conventions' message list. */
export function captureModelOutput(span: TraceSpan, response: ModelResponse): void {
  const text = response.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
  span.setAttributes({
    "gen_ai.output.messages": cappedJson(text, (content) => [
      {
        role: "assistant",
        parts: [{ type: "text", content }],
        finish_reason: response.stopReason,
      },
    ]),
  });
}

/** `gen_ai.tool.call.arguments`: the call's input as the model wrote it (JSON, capped). */
export function captureToolArguments(span: TraceSpan | undefined, input: unknown): void {
  span?.setAttributes({ "gen_ai.tool.call.arguments": cappedText(JSON.stringify(input) ?? "null") });
}

/** `gen_ai.tool.call.result`: the result's text as committed (what the model reads next), capped. */
export function captureToolResult(span: TraceSpan | undefined, content: readonly ContentBlock[]): void {
  span?.setAttributes({ "gen_ai.tool.call.result": cappedText(textOf(content)) });
}
