/**
 * The scripted fake providers as an outcome's grader: how a test tells a grader request from the
 * agent's (the grader's own system prompt) and scripts its verdict in the parseable form.
 */
import { GRADER_SYSTEM_PROMPT, type GraderVerdict } from "../../src/providers/outcomeGrading.js";
import type { ScriptedReply } from "./fakeModelScript.js";

/** Whether a recorded request body (either wire) is a grader's. */
export function isGraderRequest(body: Record<string, unknown>): boolean {
  if (body.system === GRADER_SYSTEM_PROMPT) return true;
  // OpenAI-compatible wires carry the system prompt as the first message.
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const first = messages[0] as { role?: string; content?: unknown } | undefined;
  return first?.role === "system" && first.content === GRADER_SYSTEM_PROMPT;
}

/** A grader's answer giving `verdict`. */
export function graderReply(verdict: GraderVerdict, explanation: string): ScriptedReply {
  return { kind: "text", text: JSON.stringify({ verdict, explanation }) };
}

/**
 * A fallback that answers grader requests with `grader(n)` (n: the grader request's 0-based
 * ordinal) and the agent's with `agent` (default: the fake's echo).
 */
export function withGrader(
  grader: (ordinal: number) => ScriptedReply,
  agent: (body: Record<string, unknown>) => ScriptedReply,
): (body: Record<string, unknown>) => ScriptedReply {
  let graded = 0;
  return (body) => (isGraderRequest(body) ? grader(graded++) : agent(body));
}
