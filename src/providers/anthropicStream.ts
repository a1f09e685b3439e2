/**
 * Folds Anthropic Messages stream events into a ModelResponse, forwarding text, thinking and
 * tool-input deltas as they arrive. Kept apart from the client code so it can be reasoned about as a pure state machine.
 */
import type {
  RawContentBlockDelta,
  RawContentBlockStartEvent,
  RawMessageStreamEvent,
  StopReason,
} from "@anthropic-ai/sdk/resources/messages";
import { fromAnthropicStopReason } from "./anthropicMapping.js";
import type { ModelResponse, ModelStreamEvent, ModelUsage } from "./ports.js";
import { truncatedStreamError } from "./providerFailure.js";
import { parseToolInput } from "./toolInput.js";

type Slot =
  | { kind: "text"; text: string }
  | { kind: "tool_use"; id: string; name: string; json: string; ordinal: number }
  | { kind: "thinking"; ordinal: number }
  | { kind: "ignored" };

export class AnthropicStreamAccumulator {
  /** Wire block index → slot; `output` keeps the kept blocks in response order. */
  private readonly slots = new Map<number, Slot>();
  private readonly output: Slot[] = [];
  private readonly usage: ModelUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
  };
  private toolUses = 0;
  private thinkingBlocks = 0;
  private stopReason: StopReason | null = null;
  private stopped = false;

  constructor(private readonly onEvent: (event: ModelStreamEvent) => void) {}

  add(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case "message_start":
        this.mergeUsage(event.message.usage);
        return;
      case "content_block_start":
        this.startBlock(event.index, event.content_block);
        return;
      case "content_block_delta":
        this.applyDelta(event.index, event.delta);
        return;
      case "message_delta":
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        // message_delta usage is cumulative, so later values replace earlier ones.
        this.mergeUsage(event.usage);
        return;
      case "message_stop":
        this.stopped = true;
        return;
      default:
        return;
    }
  }

  finish(): ModelResponse {
    // Without message_stop the stream was cut off; a partial answer must not pass as complete.
    if (!this.stopped) throw truncatedStreamError("anthropic");
    const content: ModelResponse["content"] = [];
    for (const slot of this.output) {
      if (slot.kind === "text") content.push({ type: "text", text: slot.text });
      if (slot.kind === "tool_use") {
        const input = parseToolInput("anthropic", slot.name, slot.json);
        content.push({ type: "tool_use", id: slot.id, name: slot.name, input });
      }
    }
    const sawToolUse = content.some((block) => block.type === "tool_use");
    return { content, stopReason: fromAnthropicStopReason(this.stopReason, sawToolUse), usage: this.usage };
  }

  private startBlock(index: number, block: RawContentBlockStartEvent["content_block"]): void {
    if (block.type === "text") {
      const slot = { kind: "text" as const, text: "" };
      this.keep(index, slot);
      // Text normally starts empty; if not, emit it so deltas still concatenate to the final text.
      if (block.text) this.appendText(slot, block.text);
      return;
    }
    if (block.type === "tool_use") {
      const ordinal = this.toolUses++;
      this.keep(index, { kind: "tool_use", id: block.id, name: block.name, json: "", ordinal });
      this.onEvent({ type: "tool_input_start", index: ordinal, id: block.id, name: block.name });
      return;
    }
    if (block.type === "thinking") {
      // Thinking is streamed as evidence only: it is not part of the port's response shape.
      const slot = { kind: "thinking" as const, ordinal: this.thinkingBlocks++ };
      this.slots.set(index, slot);
      if (block.thinking) this.onEvent({ type: "thinking_delta", index: slot.ordinal, text: block.thinking });
      return;
    }
    // Redacted thinking and server-tool blocks are not part of the port's response shape.
    this.slots.set(index, { kind: "ignored" });
  }

  private applyDelta(index: number, delta: RawContentBlockDelta): void {
    const slot = this.slots.get(index);
    if (slot?.kind === "text" && delta.type === "text_delta") {
      this.appendText(slot, delta.text);
    }
    if (slot?.kind === "tool_use" && delta.type === "input_json_delta") {
      slot.json += delta.partial_json;
      // The wire opens every input with an empty fragment; it previews nothing.
      if (delta.partial_json !== "") {
        this.onEvent({ type: "tool_input_delta", index: slot.ordinal, partialJson: delta.partial_json });
      }
    }
    if (slot?.kind === "thinking" && delta.type === "thinking_delta" && delta.thinking !== "") {
      this.onEvent({ type: "thinking_delta", index: slot.ordinal, text: delta.thinking });
    }
  }

  private keep(index: number, slot: Slot): void {
    this.slots.set(index, slot);
    this.output.push(slot);
  }

  private appendText(slot: Slot & { kind: "text" }, text: string): void {
    slot.text += text;
    // The event index is the block's position in the returned content, which equals the wire
    // index unless the model also produced blocks the port drops (e.g. thinking).
    this.onEvent({ type: "text_delta", index: this.output.indexOf(slot), text });
  }

  private mergeUsage(usage: {
    input_tokens: number | null;
    output_tokens: number | null;
    cache_creation_input_tokens: number | null;
    cache_read_input_tokens: number | null;
  }): void {
    // The wire's counters, each kept until a later event reports it again.
    this.usage.inputTokens = usage.input_tokens ?? this.usage.inputTokens;
    this.usage.outputTokens = usage.output_tokens ?? this.usage.outputTokens;
    this.usage.cacheCreationInputTokens =
      usage.cache_creation_input_tokens ?? this.usage.cacheCreationInputTokens;
    this.usage.cacheReadInputTokens = usage.cache_read_input_tokens ?? this.usage.cacheReadInputTokens;
  }
}
