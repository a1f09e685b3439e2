/**
 * The dreamer's answer checked against the memory family's rules before anything is written: a
 * JSON list of `{path, content}`, each path valid and used once, no path a directory of another,
 * each content within the memory size limit, and no more memories than a store may hold. The
 * reasons never quote the model's text (it may echo anything it read).
 */
import { parseDreamAnswer } from "../providers/dreaming.js";
import type { MemoryLimits } from "../resources/memory/memoryLimits.js";
import { memoryPathProblem } from "../resources/memory/memoryPaths.js";
import type { DreamError } from "./ports.js";

export type DreamOutputCheck =
  | { ok: true; memories: Array<{ path: string; content: string }> }
  | { ok: false; error: DreamError };

export function checkDreamOutput(answer: string, limits: MemoryLimits): DreamOutputCheck {
  const memories = parseDreamAnswer(answer);
  if (memories === null) {
    return invalid('The dreamer\'s answer is not a JSON object {"memories": [{"path", "content"}, ...]}.');
  }
  if (memories.length > limits.maxMemoriesPerStore) {
    return invalid(
      `The dreamer's answer lists ${memories.length} memories; a store holds at most ${limits.maxMemoriesPerStore}.`,
    );
  }
  const paths = new Set<string>();
  for (const [index, memory] of memories.entries()) {
    const problem = memoryPathProblem(memory.path);
    if (problem) return invalid(`Memory ${index + 1} of the dreamer's answer: its path ${problem}.`);
    if (paths.has(memory.path)) return invalid(`Memory ${index + 1} of the dreamer's answer repeats a path.`);
    paths.add(memory.path);
    const bytes = Buffer.byteLength(memory.content, "utf8");
    if (bytes > limits.maxContentBytes) {
      return invalid(
        `Memory ${index + 1} of the dreamer's answer is ${bytes} bytes; at most ${limits.maxContentBytes} are accepted.`,
      );
    }
  }
  for (const [index, memory] of memories.entries()) {
    const segments = memory.path.split("/");
    for (let end = 2; end < segments.length; end++) {
      if (paths.has(segments.slice(0, end).join("/"))) {
        return invalid(`Memory ${index + 1} of the dreamer's answer lies below another memory's path.`);
      }
    }
  }
  return { ok: true, memories };
}

function invalid(message: string): DreamOutputCheck {
  return { ok: false, error: { type: "invalid_output", message } };
}
