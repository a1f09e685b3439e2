/**
 * Folds OpenAI chat completion chunks into a ModelResponse. Text is one block (index 0); tool call
 * arguments arrive as string fragments keyed by the tool call's index and are joined here. Text,
 * reasoning (from compatible servers) and argument fragments are forwarded as they arrive.
 */
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { fromOpenAIFinishReason } from "./openaiMapping.js";
import type { ModelResponse, ModelStreamEvent, ModelUsage } from "./ports.js";
import { truncatedStreamError } from "./providerFailure.js";
import { parseToolInput } from "./toolInput.js";

interface PendingToolCall {
  id: string;
  name: string;
  args: string;
  /** Position among the answer's tool uses: the order the calls first appeared. */
  ordinal: number;
  /** Whether `tool_input_start` went out (it waits for the name). */
  started: boolean;
}

/**
 * The official API streams no reasoning; OpenAI-compatible servers that do put it in one of these
 * delta fields (DeepSeek and vLLM: `reasoning_content`; OpenRouter and Ollama: `reasoning`).
 */
type ReasoningDelta = { reasoning_content?: unknown; reasoning?: unknown };

export class OpenAIStreamAccumulator {
  private text = "";
  private sawRefusal = false;
  private readonly toolCalls = new Map<number, PendingToolCall>();
  private finishReason: ChatCompletionChunk.Choice["finish_reason"] = null;
  private readonly usage: ModelUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
  };

  constructor(private readonly onEvent: (event: ModelStreamEvent) => void) {}

  add(chunk: ChatCompletionChunk): void {
    if (chunk.usage) {
      this.usage.inputTokens = chunk.usage.prompt_tokens;
      this.usage.outputTokens = chunk.usage.completion_tokens;
      this.usage.cacheReadInputTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    // We never ask for n > 1, so only choice 0 exists.
    const choice = chunk.choices.find((candidate) => candidate.index === 0);
    if (!choice) return;
    const { content, refusal, tool_calls: toolCalls } = choice.delta;
    const reasoning = reasoningOf(choice.delta as ReasoningDelta);
    if (reasoning) this.onEvent({ type: "thinking_delta", index: 0, text: reasoning });
    if (content) this.appendText(content);
    // A refusal is what the model said instead of answering; keep it as the visible text.
    if (refusal) {
      this.sawRefusal = true;
      this.appendText(refusal);
    }
    for (const fragment of toolCalls ?? []) this.addToolFragment(fragment);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  finish(): ModelResponse {
    // The SDK swallows `[DONE]`, so a finish_reason is the only proof the answer is complete.
    if (this.finishReason === null) throw truncatedStreamError("openai");
    const content: ModelResponse["content"] = [];
    if (this.text !== "") content.push({ type: "text", text: this.text });
    // In the order the calls appeared, which is the order their previews were numbered in.
    for (const call of this.toolCalls.values()) {
      content.push({
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: parseToolInput("openai", call.name, call.args),
      });
    }
    return {
      content,
      stopReason: fromOpenAIFinishReason(this.finishReason, this.sawRefusal),
      usage: this.usage,
    };
  }

  private appendText(text: string): void {
    this.text += text;
    this.onEvent({ type: "text_delta", index: 0, text });
  }

  private addToolFragment(fragment: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    let call = this.toolCalls.get(fragment.index);
    if (!call) {
      // Some OpenAI-compatible servers omit ids; the runtime still needs one to pair the result.
      call = {
        id: fallbackId(fragment.index),
        name: "",
        args: "",
        ordinal: this.toolCalls.size,
        started: false,
      };
      this.toolCalls.set(fragment.index, call);
    }
    if (fragment.id) call.id = fragment.id;
    // OpenAI sends the name whole in the first fragment; some compatible servers repeat it.
    if (fragment.function?.name && call.name === "") call.name = fragment.function.name;
    const args = fragment.function?.arguments;
    if (args) call.args += args;
    if (!call.started && call.name !== "") {
      call.started = true;
      const start = { type: "tool_input_start" as const, index: call.ordinal, name: call.name };
      this.onEvent(call.id === fallbackId(fragment.index) ? start : { ...start, id: call.id });
      // Fragments that came before the name are previewed at once.
      if (call.args !== "")
        this.onEvent({ type: "tool_input_delta", index: call.ordinal, partialJson: call.args });
    } else if (call.started && args) {
      this.onEvent({ type: "tool_input_delta", index: call.ordinal, partialJson: args });
    }
  }
}

function reasoningOf(delta: ReasoningDelta): string | null {
  const value = delta.reasoning_content ?? delta.reasoning;
  return typeof value === "string" && value !== "" ? value : null;
}

function fallbackId(index: number): string {
  return `call_${index}`;
}
