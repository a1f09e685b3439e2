/**
 * The product's deterministic token estimate: one token per four characters, rounded up. It counts
 * the system prompt, every text block, each tool use's name and JSON input, each tool result's text,
 * every tool spec as JSON, and a flat 1,600 tokens per image (what a large image costs a Claude
 * model). No provider's tokenizer is asked: the same request always estimates the same, on any
 * worker, which is what the compaction threshold and the offline model's usage need.
 */
import type { ModelContentBlock, ModelMessage, ModelRequest } from "./ports.js";

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;

/** The estimated input tokens of a whole request. */
export function estimateRequestTokens(request: Pick<ModelRequest, "system" | "messages" | "tools">): number {
  let chars = request.system?.length ?? 0;
  let images = 0;
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block.type === "image") images += 1;
      else chars += blockChars(block);
    }
  }
  for (const tool of request.tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

/** The estimated tokens of some messages alone (no system prompt, no tools). */
export function estimateMessageTokens(messages: readonly ModelMessage[]): number {
  return estimateRequestTokens({ system: null, messages: [...messages], tools: [] });
}

/** The estimated tokens of a plain text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function blockChars(block: Exclude<ModelContentBlock, { type: "image" }>): number {
  switch (block.type) {
    case "text":
      return block.text.length;
    case "tool_use":
      return block.name.length + JSON.stringify(block.input).length;
    case "tool_result":
      return block.content.reduce((total, part) => total + part.text.length, 0);
  }
}
