/**
 * The offline model as a dreamer: a reorganized store decided from the request alone, so tests (and
 * a keyless install) see a dream complete with a known result.
 *
 * The rule:
 * 1. An instructions line `offline-dream: invalid` answers prose with no JSON (an unusable answer,
 *    which fails the dream), for tests of that path.
 * 2. Otherwise every memory of the source store is kept as is, and each session adds one memory,
 *    `/sessions/<session id>.md`, holding its transcript as `user: …` / `agent: …` lines. Memories
 *    whose content is identical (trimmed) are merged into the one with the smallest path. The answer
 *    lists the memories sorted by path.
 */
import type { DreamMemory, DreamRequest } from "./dreaming.js";

const INVALID = /^\s*offline-dream:\s*invalid\s*$/im;

export function offlineDreamAnswer(request: DreamRequest): string {
  if (request.instructions !== null && INVALID.test(request.instructions)) {
    return "I dreamt of nothing in particular.";
  }
  const memories: DreamMemory[] = [...request.memories];
  for (const session of request.sessions) {
    const lines = session.transcript.map((entry) => `${entry.role}: ${entry.text}`);
    memories.push({ path: `/sessions/${session.id}.md`, content: lines.join("\n") });
  }
  memories.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const seen = new Set<string>();
  const merged = memories.filter((memory) => {
    const key = memory.content.trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return JSON.stringify({ memories: merged });
}
