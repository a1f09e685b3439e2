/**
 * The offline model as an outcome grader: a verdict decided from the rubric and the attempt alone,
 * so tests (and a keyless install) see the whole evaluate→revise cycle deterministically.
 *
 * The rule, in order:
 * 1. A rubric line `offline-verdict: <v>` decides: `satisfied`, `needs_revision` (every time),
 *    `failed` (the rubric does not apply), or `unreadable` (an answer that is no verdict at all,
 *    which the runtime treats as an unusable grader).
 * 2. Otherwise every phrase the rubric quotes in backticks must appear in the attempt, as written:
 *    all present → `satisfied`; else `needs_revision`, naming the missing phrases in backticks.
 *    (The offline agent repeats what it is told, so the feedback's phrases make its next attempt
 *    pass: one revision, then satisfied.)
 * 3. A rubric with neither is met by any attempt.
 */
import type { GraderRequest } from "./outcomeGrading.js";

const DIRECTIVE = /^\s*offline-verdict:\s*(satisfied|needs_revision|failed|unreadable)\s*$/im;
const QUOTED = /`([^`\n]+)`/g;

export function offlineGraderAnswer(request: GraderRequest): string {
  const directive = DIRECTIVE.exec(request.rubric)?.[1];
  if (directive === "unreadable") return "I would rather not give a verdict on this attempt.";
  if (directive !== undefined) {
    return verdict(directive, `The rubric tells the offline grader to answer ${directive}.`);
  }
  const required = [...new Set([...request.rubric.matchAll(QUOTED)].map((match) => match[1] ?? ""))];
  const missing = required.filter((phrase) => !request.attempt.includes(phrase));
  if (missing.length > 0) {
    const list = missing.map((phrase) => `\`${phrase}\``).join(", ");
    return verdict("needs_revision", `The attempt does not include ${list}, which the rubric requires.`);
  }
  return verdict(
    "satisfied",
    required.length > 0
      ? "The attempt includes every phrase the rubric requires."
      : "The attempt addresses the task; the rubric names nothing it lacks.",
  );
}

function verdict(value: string, explanation: string): string {
  return JSON.stringify({ verdict: value, explanation });
}
