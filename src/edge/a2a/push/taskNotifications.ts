import type { StreamResponse, TaskState } from "@a2a-js/sdk";
import type { CommittedTypedFact } from "../../../coordinator/factVocabulary.js";
import { STATE } from "../a2aWire.js";
import { parseTaskId } from "../taskIds.js";
import { projectTasks, type TurnTask } from "../taskProjection.js";
import { TaskStreamFormatter } from "../taskStream.js";
import { isTerminal } from "../taskTracker.js";

/** A notification and the fact that made it (its position follows from the fact's seq). */
export interface TaskNotification {
  seq: number;
  event: StreamResponse;
}

export interface NotificationsAfter {
  notifications: TaskNotification[];
  /** The last fact looked at: the config's next cursor. */
  toSeq: number;
  /** The task ended (or its turn's range did, or it is gone): stop following it. */
  finished: boolean;
}

/** The task as the facts up to `seq` show it, or null when they hold no such task. */
export function taskAt(sessionId: string, taskId: string, facts: readonly CommittedTypedFact[], seq: number) {
  const ids = parseTaskId(taskId);
  if (!ids) return null;
  const before = facts.filter((f) => f.seq <= seq);
  return projectTasks(sessionId, before).find((t) => t.userFact.id === ids.factId) ?? null;
}

/**
 * What a push config says about the facts committed after its cursor: each change of the task's
 * state (working, input-required, completed, failed, canceled) and each committed agent text as
 * an artifact, formatted as the live stream formats them (`TaskStreamFormatter`), so a webhook
 * reads what a streaming client reads, without previews or tool-step statuses. `facts` is the
 * session's committed history; the cursor makes this a pure function of it.
 */
export function notificationsAfter(
  sessionId: string,
  taskId: string,
  facts: readonly CommittedTypedFact[],
  cursorSeq: number,
): NotificationsAfter {
  const task: TurnTask | null = taskAt(sessionId, taskId, facts, cursorSeq);
  if (!task || isTerminal(task.tracker.state)) {
    return { notifications: [], toSeq: cursorSeq, finished: true };
  }
  const formatter = new TaskStreamFormatter(task);
  const notifications: TaskNotification[] = [];
  let state: TaskState = STATE[task.tracker.state];
  let toSeq = cursorSeq;
  for (const fact of facts) {
    if (fact.seq <= cursorSeq) continue;
    toSeq = fact.seq;
    for (const event of formatter.fact(fact).events) {
      const payload = event.payload;
      if (payload?.$case === "artifactUpdate") notifications.push({ seq: fact.seq, event });
      if (payload?.$case === "statusUpdate" && payload.value.status?.state !== state) {
        state = payload.value.status?.state ?? state;
        notifications.push({ seq: fact.seq, event });
      }
    }
    // A later user message ends this task's range, whatever its state.
    if (fact.kind === "user_message" || isTerminal(task.tracker.state)) {
      return { notifications, toSeq, finished: true };
    }
  }
  return { notifications, toSeq, finished: false };
}
