/**
 * The summarization request a compaction sends the agent's model: the part of the view being
 * replaced (the previous summary and the facts through the cut) as a plain transcript, with an
 * instruction to summarize it. A transcript, not the conversation itself, so the request needs no
 * tools and no tool-use pairing, and so it can be clipped to fit the window it is sent to.
 */

import type { ModelContentBlock, ModelMessage, ModelRequest } from "../providers/ports.js";
import { estimateTextTokens } from "../providers/tokenEstimate.js";

export const SUMMARIZER_SYSTEM = [
  "You compact the history of an agent's conversation so the agent can continue from your summary alone.",
  "Summarize the transcript you are given: the user's goals and their latest request (quote it),",
  "decisions taken, facts and tool results that still matter, files and identifiers in use,",
  "open questions and the next steps. Write plain prose without a preamble.",
].join(" ");

/** The longest a single block is shown in the transcript; the rest is clipped. */
const BLOCK_CHARS = 4_000;
/** The fewest tokens a summary may be asked for, whatever the window. */
const MIN_SUMMARY_TOKENS = 256;
/** The most tokens a summary may be asked for. */
const MAX_SUMMARY_TOKENS = 2_048;

/**
 * The request, sent with `window` tokens at most: its answer may take `summaryTokens`, and the
 * transcript keeps its newest lines within the rest, saying where older ones were left out.
 */
export function summaryRequest(
  model: string,
  previousSummary: string | null,
  replaced: readonly ModelMessage[],
  limits: { window: number; summaryTokens: number },
): ModelRequest {
  // A few tokens go to the transcript's own headings and the note on what was left out.
  const room = limits.window - limits.summaryTokens - estimateTextTokens(SUMMARIZER_SYSTEM) - 64;
  const lines = replaced.flatMap((message) => message.content.map((block) => line(message.role, block)));
  const head =
    previousSummary === null
      ? ""
      : `Summary of the conversation before this part:\n${clip(previousSummary, Math.max(0, room))}\n\n`;
  const kept: string[] = [];
  let used = estimateTextTokens(head);
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = lines[i] as string;
    const cost = estimateTextTokens(next) + 1;
    if (used + cost > room) {
      kept.unshift(`[${i + 1} earlier entries left out]`);
      break;
    }
    kept.unshift(next);
    used += cost;
  }
  return {
    model,
    system: SUMMARIZER_SYSTEM,
    messages: [{ role: "user", content: [{ type: "text", text: `${head}Transcript:\n${kept.join("\n")}` }] }],
    tools: [],
    maxTokens: limits.summaryTokens,
  };
}

/** What a summary may cost: a quarter of the room the view has for messages, within bounds. */
export function summaryTokens(messageRoom: number): number {
  return Math.min(MAX_SUMMARY_TOKENS, Math.max(MIN_SUMMARY_TOKENS, Math.floor(messageRoom / 4)));
}

function line(role: ModelMessage["role"], block: ModelContentBlock): string {
  const who = role === "user" ? "User" : "Assistant";
  switch (block.type) {
    case "text":
      return `${who}: ${clip(block.text)}`;
    case "image":
      return `${who}: [an image]`;
    case "tool_use":
      return `Assistant called ${block.name}: ${clip(JSON.stringify(block.input))}`;
    case "tool_result": {
      const text = block.content.map((part) => part.text).join("\n");
      return `Tool result${block.is_error ? " (error)" : ""}: ${clip(text)}`;
    }
  }
}

function clip(text: string, chars = BLOCK_CHARS): string {
  return text.length <= chars ? text : `${text.slice(0, chars)} …[clipped]`;
}
