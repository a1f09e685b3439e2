/**
 * The product's deterministic token estimate: one token per four ASCII characters and one per
 * other character (a CJK character or an accented letter is about a token to every tokenizer),
 * rounded up. It counts the system prompt, every text block, each tool use's name and JSON input,
 * each tool result's text, every tool spec as JSON, and a flat 1,600 tokens per image (what a
 * large image costs a Claude model). No provider's tokenizer is asked: the same request always
 * estimates the same, on any worker, which is what the compaction threshold and the offline
 * model's usage need.
 */
import type { ModelContentBlock, ModelMessage, ModelRequest } from "./ports.js";

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;

/** The estimated input tokens of a whole request. */
export function estimateRequestTokens(request: Pick<ModelRequest, "system" | "messages" | "tools">): number {
  let chars = weighted(request.system ?? "");
  let images = 0;
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block.type === "image") images += 1;
      else chars += blockChars(block);
    }
  }
  for (const tool of request.tools) chars += weighted(JSON.stringify(tool));
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

/** The estimated tokens of some messages alone (no system prompt, no tools). */
export function estimateMessageTokens(messages: readonly ModelMessage[]): number {
  return estimateRequestTokens({ system: null, messages: [...messages], tools: [] });
}

/** The estimated tokens of a plain text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(weighted(text) / CHARS_PER_TOKEN);
}

/** A text's length in quarter tokens: an ASCII character is one, any other character four. */
function weighted(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) length += CHARS_PER_TOKEN - 1;
  return length;
}

function blockChars(block: Exclude<ModelContentBlock, { type: "image" }>): number {
  switch (block.type) {
    case "text":
      return weighted(block.text);
    case "tool_use":
      return weighted(block.name) + weighted(JSON.stringify(block.input));
    case "tool_result":
      return block.content.reduce((total, part) => total + weighted(part.text), 0);
  }
}
