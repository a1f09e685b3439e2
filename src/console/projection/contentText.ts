/** Readable text of a content block list: text as it is, other blocks by their kind. */
export function contentText(content: ReadonlyArray<{ type: string }> | null | undefined): string {
  if (!content) return "";
  return content
    .map((block) => {
      if (block.type === "text" && "text" in block && typeof block.text === "string") return block.text;
      return `[${block.type}]`;
    })
    .join("");
}

/** A JSON value as the operator reads it: indented, never throwing on odd input. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}
