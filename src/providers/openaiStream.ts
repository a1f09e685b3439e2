/**
 * Folds OpenAI chat completion chunks into a ModelResponse. Text is one block (index 0); tool call
 * arguments arrive as string fragments keyed by the tool call's index and are joined here.
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
}

export class OpenAIStreamAccumulator {
  private text = "";
  private sawRefusal = false;
  private readonly toolCalls = new Map<number, PendingToolCall>();
  private finishReason: ChatCompletionChunk.Choice["finish_reason"] = null;
  private readonly usage: ModelUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };

  constructor(private readonly onEvent: (event: ModelStreamEvent) => void) {}

  add(chunk: ChatCompletionChunk): void {
    if (chunk.usage) {
      this.usage.input_tokens = chunk.usage.prompt_tokens;
      this.usage.output_tokens = chunk.usage.completion_tokens;
      this.usage.cache_read_input_tokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    // We never ask for n > 1, so only choice 0 exists.
    const choice = chunk.choices.find((candidate) => candidate.index === 0);
    if (!choice) return;
    const { content, refusal, tool_calls: toolCalls } = choice.delta;
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
    const calls = [...this.toolCalls.entries()].sort(([a], [b]) => a - b);
    for (const [, call] of calls) {
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
      call = { id: `call_${fragment.index}`, name: "", args: "" };
      this.toolCalls.set(fragment.index, call);
    }
    if (fragment.id) call.id = fragment.id;
    // OpenAI sends the name whole in the first fragment; some compatible servers repeat it.
    if (fragment.function?.name && call.name === "") call.name = fragment.function.name;
    if (fragment.function?.arguments) call.args += fragment.function.arguments;
  }
}
