/**
 * A task is one turn: the one its user message opened. Its id names the session and that message's
 * fact, so it is stable, stored (in the fact itself) and enough to find the task again without a
 * table of its own.
 */
export function taskIdOf(sessionId: string, userMessageFactId: string): string {
  return `${sessionId}.${userMessageFactId}`;
}

/** The session and user-message fact a task id names; null for an id this edge never made. */
export function parseTaskId(taskId: string): { sessionId: string; factId: string } | null {
  const dot = taskId.indexOf(".");
  if (dot <= 0) return null;
  const sessionId = taskId.slice(0, dot);
  const factId = taskId.slice(dot + 1);
  if (!sessionId.startsWith("sesn_") || factId === "" || factId.includes(".")) return null;
  return { sessionId, factId };
}
