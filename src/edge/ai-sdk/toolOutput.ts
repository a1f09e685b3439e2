import type { ContentBlock } from "../../coordinator/factVocabulary.js";

/**
 * A client tool's output as the session stores it: the model reads text, so a string goes in as
 * it is and anything else as its JSON.
 */
export function outputToContent(output: unknown): ContentBlock[] {
  const text = typeof output === "string" ? output : (JSON.stringify(output) ?? "");
  return [{ type: "text", text }];
}

/** The text of a result's text blocks, joined (what the model read; what a UI shows). */
export function contentText(content: readonly ContentBlock[]): string {
  return content
    .flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
    .join("");
}

/**
 * A stored result as the UI's `output`. A client's own result reads back as the object or array it
 * sent when its text is one (what `outputToContent` wrote; a string stays a string); a server
 * result is its text, or its blocks when some are not text (an image a tool returned).
 */
export function contentToOutput(content: readonly ContentBlock[], by: "server" | "client"): unknown {
  if (!content.every((block) => block.type === "text")) return content;
  const text = contentText(content);
  if (by === "client" && /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
