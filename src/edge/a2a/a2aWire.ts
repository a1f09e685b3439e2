import { type Artifact, type Message, type Part, Role, type Task, TaskState } from "@a2a-js/sdk";
import type { TaskStateName } from "./taskTracker.js";

/** The protocol's shapes, as the SDK's codecs (protobuf JSON) read and write them. */

export const STATE: Record<TaskStateName, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
};

export function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    mediaType: "text/plain",
    filename: "",
    metadata: undefined,
  };
}

export function dataPart(value: Record<string, unknown>): Part {
  return {
    content: { $case: "data", value },
    mediaType: "application/json",
    filename: "",
    metadata: undefined,
  };
}

export function agentMessage(messageId: string, taskId: string, contextId: string, parts: Part[]): Message {
  return message(messageId, taskId, contextId, Role.ROLE_AGENT, parts);
}

export function message(
  messageId: string,
  taskId: string,
  contextId: string,
  role: Role,
  parts: Part[],
): Message {
  return {
    messageId,
    contextId,
    taskId,
    role,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function textArtifact(artifactId: string, text: string): Artifact {
  return {
    artifactId,
    name: "response",
    description: "",
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
  };
}

export function emptyTask(id: string, contextId: string): Task {
  return { id, contextId, status: undefined, artifacts: [], history: [], metadata: undefined };
}

export const isoTime = (ms: number): string => new Date(ms).toISOString();
