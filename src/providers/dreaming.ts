/**
 * How a dream asks its model and how the model answers: the dreamer's system prompt, the request's
 * one user message and the answer's parseable form. Shared by the Dreams context (which asks and
 * parses) and the offline model (which answers dream requests deterministically, see
 * `offlineDreamer.ts`), as outcome grading shares `outcomeGrading.ts`.
 */

export const DREAMER_SYSTEM_PROMPT = [
  "You are a dreamer. You reorganize an agent's memory store using what happened in past sessions.",
  "You see the store's memories (path and content), transcripts of past sessions and, maybe, instructions.",
  "Produce the complete new store: merge duplicates, drop what is stale or contradicted, record what the",
  "sessions taught that is worth remembering, and keep paths short and meaningful.",
  "Answer with exactly one JSON object and nothing else:",
  '{"memories": [{"path": "/<segment>/<file>.md", "content": "<text>"}, ...]}',
  "Each path starts with /, has no empty, . or .. segment, and appears once; no path may be a prefix",
  "directory of another. The store you answer replaces the old one whole.",
].join("\n");

export interface DreamMemory {
  path: string;
  content: string;
}

export interface DreamTranscriptEntry {
  role: "user" | "agent";
  text: string;
}

export interface DreamRequest {
  instructions: string | null;
  memories: DreamMemory[];
  sessions: Array<{ id: string; transcript: DreamTranscriptEntry[] }>;
}

const OPEN = "<dream_request>\n";
const CLOSE = "\n</dream_request>";

/** The dream's one user message: the request as JSON between tags (content may hold any text). */
export function dreamRequestText(request: DreamRequest): string {
  return `${OPEN}${JSON.stringify(request, null, 1)}${CLOSE}`;
}

/** The request a dream's user message holds (for a model that answers it itself); null if not one. */
export function readDreamRequest(text: string): DreamRequest | null {
  if (!text.startsWith(OPEN) || !text.endsWith(CLOSE)) return null;
  try {
    const parsed = JSON.parse(text.slice(OPEN.length, text.length - CLOSE.length)) as DreamRequest;
    return Array.isArray(parsed.memories) && Array.isArray(parsed.sessions) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * The memories a dreamer's answer lists: the first JSON object in it with a `memories` array whose
 * items are all `{path: string, content: string}` (prose or a code fence around it is tolerated).
 * Null: no such object. Paths and sizes are checked by the caller against the memory limits.
 */
export function parseDreamAnswer(text: string): DreamMemory[] | null {
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    for (let end = text.lastIndexOf("}"); end > start; end = text.lastIndexOf("}", end - 1)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.slice(start, end + 1));
      } catch {
        continue;
      }
      if (typeof parsed !== "object" || parsed === null) continue;
      const { memories } = parsed as Record<string, unknown>;
      if (!Array.isArray(memories)) continue;
      const valid = memories.every(
        (m): m is DreamMemory =>
          typeof m === "object" &&
          m !== null &&
          typeof (m as Record<string, unknown>).path === "string" &&
          typeof (m as Record<string, unknown>).content === "string",
      );
      if (!valid) return null;
      return memories.map((m: DreamMemory) => ({ path: m.path, content: m.content }));
    }
  }
  return null;
}
