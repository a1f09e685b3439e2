import type { ContentBlock } from "../../coordinator/factVocabulary.js";

/** The text of committed content blocks; a block that is not text shows as its type in brackets. */
export function contentText(blocks: readonly ContentBlock[], separator = ""): string {
  return blocks
    .map((block) =>
      block.type === "text" && typeof block.text === "string" ? block.text : `[${block.type}]`,
    )
    .join(separator);
}
