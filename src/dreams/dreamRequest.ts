/**
 * The dreamer's input, built once when the dream is created (so a resumed run asks exactly the
 * same thing): the source store's memories sorted by path, and each chosen session's committed
 * transcript (its primary thread's user and agent messages, text only), clipped to the limits.
 */
import { decodeCommitted } from "../coordinator/factCodec.js";
import type { ContentBlock } from "../coordinator/factVocabulary.js";
import type { HistoryReader } from "../coordinator/ports.js";
import type { DreamMemory, DreamTranscriptEntry } from "../providers/dreaming.js";
import type { MemorySnapshotEntry } from "../resources/ports.js";
import { DREAM_LIMITS } from "./dreamLimits.js";

const PAGE = 500;

/** The store's memories as the dreamer sees them: `/`-rooted paths, sorted. */
export function dreamMemories(snapshot: MemorySnapshotEntry[]): DreamMemory[] {
  return snapshot
    .map((entry) => ({ path: `/${entry.path}`, content: entry.content }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A session's transcript: its messages in order, the newest kept within the per-session bound. */
export async function sessionTranscript(
  history: HistoryReader,
  threadId: string,
): Promise<DreamTranscriptEntry[]> {
  const entries: DreamTranscriptEntry[] = [];
  let after = 0;
  for (;;) {
    const page = await history.readThread(threadId, after, PAGE);
    for (const fact of page.map(decodeCommitted)) {
      if (fact.kind === "user_message" || fact.kind === "agent_message") {
        const text = textOf(fact.content);
        if (text !== "") {
          entries.push({
            role: fact.kind === "user_message" ? "user" : "agent",
            text: text.slice(0, DREAM_LIMITS.transcriptEntryChars),
          });
        }
      }
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]?.seq ?? after;
  }
  return newestWithin(entries, DREAM_LIMITS.transcriptCharsPerSession);
}

function newestWithin(entries: DreamTranscriptEntry[], chars: number): DreamTranscriptEntry[] {
  let used = 0;
  let first = entries.length;
  while (first > 0) {
    const next = entries[first - 1]?.text.length ?? 0;
    if (used + next > chars) break;
    used += next;
    first--;
  }
  return entries.slice(first);
}

export function textOf(content: ContentBlock[]): string {
  return content
    .flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
    .join("\n");
}
