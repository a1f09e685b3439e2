/**
 * A workflow run's ids, all derived from the tool call that started it, so a re-run after a crash
 * finds what it already made instead of making it again (as a spawned thread's are). A step's
 * thread id names its run: the call's id, then the phase and step positions after dots, which
 * no provider's tool-call id contains.
 */

export const workflowRunIdOf = (callId: string): string => `wfr_${callId}`;
export const workflowCallIdOf = (runId: string): string => runId.slice("wfr_".length);
export const workflowPhaseIdOf = (callId: string, phase: number): string => `wfph_${callId}.${phase}`;

export const workflowStepThreadIdOf = (callId: string, phase: number, step: number): string =>
  `sthr_${callId}.${phase}.${step}`;
export const workflowStepRunIdOf = (callId: string, phase: number, step: number): string =>
  `run_${callId}.${phase}.${step}`;

const STEP_THREAD = /^sthr_(.+)\.(\d+)\.(\d+)$/;

/** The workflow run a step's thread belongs to, or null for any other thread. */
export function workflowRunOfThread(threadId: string): string | null {
  const match = STEP_THREAD.exec(threadId);
  return match?.[1] === undefined ? null : workflowRunIdOf(match[1]);
}
