import type { ContentBlock } from "../../coordinator/factVocabulary.js";

/**
 * The text AG-UI shows for committed content blocks. Agent text joins its blocks as the previews
 * streamed them (one after another); a block that is not text shows as its type in brackets.
 */
export function contentText(blocks: readonly ContentBlock[], separator = ""): string {
  return blocks
    .map((block) =>
      block.type === "text" && typeof block.text === "string" ? block.text : `[${block.type}]`,
    )
    .join(separator);
}

/** Tool results read line by line: one block per line. */
export function toolResultText(blocks: readonly ContentBlock[]): string {
  return contentText(blocks, "\n");
}
