import type { Task } from "@a2a-js/sdk";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import { isoTime, STATE, textArtifact } from "./a2aWire.js";
import { contentText } from "./contentText.js";
import { taskIdOf } from "./taskIds.js";
import { historyMessage, statusMessage } from "./taskMessages.js";
import { TaskTracker } from "./taskTracker.js";

/** One turn of a session read as a task: its user message, the facts up to the next one, its state. */
export interface TurnTask {
  id: string;
  contextId: string;
  userFact: CommittedTypedFact;
  facts: CommittedTypedFact[];
  tracker: TaskTracker;
}

/**
 * A session's committed history as tasks, oldest first: each user message opens one, and the
 * facts up to the next user message are its turn. Facts before the first user message (a session
 * made without one) belong to no task.
 */
export function projectTasks(sessionId: string, facts: readonly CommittedTypedFact[]): TurnTask[] {
  const tasks: TurnTask[] = [];
  for (const fact of facts) {
    if (fact.kind === "user_message") {
      tasks.at(-1)?.tracker.close();
      const tracker = new TaskTracker();
      tracker.updatedAt = fact.createdAt;
      tasks.push({
        id: taskIdOf(sessionId, fact.id),
        contextId: sessionId,
        userFact: fact,
        facts: [fact],
        tracker,
      });
      continue;
    }
    const task = tasks.at(-1);
    if (!task) continue;
    task.facts.push(fact);
    task.tracker.observe(fact);
  }
  return tasks;
}

export interface TaskReadOptions {
  /** The most recent messages of the history to include; absent, all of them. */
  historyLength?: number | undefined;
  includeArtifacts?: boolean | undefined;
}

/** The task as the protocol shows it: status, the agent's texts as artifacts, the turn as history. */
export function taskOf(task: TurnTask, options: TaskReadOptions = {}): Task {
  const history = task.facts.flatMap((f) => historyMessage(f, task.id, task.contextId) ?? []);
  const length = options.historyLength;
  return {
    id: task.id,
    contextId: task.contextId,
    status: {
      state: STATE[task.tracker.state],
      message: statusMessage(task.tracker, task.id, task.contextId),
      timestamp: isoTime(task.tracker.updatedAt),
    },
    artifacts: options.includeArtifacts === false ? [] : artifactsOf(task.facts),
    history: length === undefined ? history : length <= 0 ? [] : history.slice(-length),
    metadata: undefined,
  };
}

/** Each committed agent text is an artifact, named by its fact (the live stream names it alike). */
function artifactsOf(facts: readonly CommittedTypedFact[]) {
  return facts.flatMap((f) => {
    if (f.kind !== "agent_message") return [];
    const text = contentText(f.content);
    return text === "" ? [] : [textArtifact(f.id, text)];
  });
}
