/**
 * How an outcome's grader is asked and how it answers: the system prompt, the request's sections
 * and the verdict's parseable form. Shared by the runtime's grader (which asks and parses) and the
 * offline model (which answers grader requests deterministically, see `offlineGrader.ts`).
 */

/** Verdicts a grader may give; the runtime derives `max_iterations_reached` and `interrupted`. */
export type GraderVerdict = "satisfied" | "needs_revision" | "failed";

export const GRADER_SYSTEM_PROMPT = [
  "You are an outcome grader. You judge one attempt by an agent at a task against a rubric.",
  "You see the task, the rubric and the attempt; you do not see the agent's conversation.",
  "Answer with exactly one JSON object and nothing else:",
  '{"verdict": "satisfied" | "needs_revision" | "failed", "explanation": "<one short paragraph>"}',
  '- "satisfied": the attempt meets every criterion of the rubric; say why.',
  '- "needs_revision": some criterion is unmet; say which and what to change (the agent reads this).',
  '- "failed": the rubric cannot apply to this task or attempt at all; say why.',
].join("\n");

export interface GraderRequest {
  task: string;
  rubric: string;
  attempt: string;
}

const RUBRIC_END = "\n</rubric>\n\n<attempt>\n";
const TASK_END = "\n</task>\n\n<rubric>\n";

/** The grader's one user message: the task, the rubric and the attempt, in tagged sections. */
export function graderRequestText(request: GraderRequest): string {
  return `<task>\n${request.task}${TASK_END}${request.rubric}${RUBRIC_END}${request.attempt}\n</attempt>`;
}

/** The sections of a grader request (for a model that answers them itself); null if not one. */
export function readGraderRequest(text: string): GraderRequest | null {
  if (!text.startsWith("<task>\n") || !text.endsWith("\n</attempt>")) return null;
  const taskEnd = text.indexOf(TASK_END);
  const rubricEnd = text.lastIndexOf(RUBRIC_END);
  if (taskEnd < 0 || rubricEnd < taskEnd) return null;
  return {
    task: text.slice("<task>\n".length, taskEnd),
    rubric: text.slice(taskEnd + TASK_END.length, rubricEnd),
    attempt: text.slice(rubricEnd + RUBRIC_END.length, text.length - "\n</attempt>".length),
  };
}

const VERDICTS: readonly string[] = ["satisfied", "needs_revision", "failed"] satisfies GraderVerdict[];

/**
 * The verdict in a grader's answer: the first JSON object in it with a known `verdict` and a
 * non-empty `explanation` (prose or a code fence around it is tolerated). Null: unusable.
 */
export function parseGraderVerdict(text: string): { verdict: GraderVerdict; explanation: string } | null {
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    for (let end = text.lastIndexOf("}"); end > start; end = text.lastIndexOf("}", end - 1)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.slice(start, end + 1));
      } catch {
        continue;
      }
      if (typeof parsed !== "object" || parsed === null) continue;
      const { verdict, explanation } = parsed as Record<string, unknown>;
      if (typeof verdict !== "string" || !VERDICTS.includes(verdict)) continue;
      if (typeof explanation !== "string" || explanation.trim() === "") continue;
      return { verdict: verdict as GraderVerdict, explanation: explanation.trim() };
    }
  }
  return null;
}
