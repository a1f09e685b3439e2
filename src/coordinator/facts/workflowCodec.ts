import type { JsonObject, JsonValue } from "../../kernel/json.js";
import type { Fact } from "../facts.js";
import type {
  TypedFact,
  WorkflowPhase,
  WorkflowRunChange,
  WorkflowRunError,
  WorkflowRunResult,
} from "../factVocabulary.js";
import { object, text } from "./bodyValues.js";

// A workflow run's changes, each stored under its wire type (`workflow_run.<change>`) with the
// wire's fields as its body, as the other facts are.

export type WorkflowFact = Extract<TypedFact, { kind: "workflow_run" }>;

const PREFIX = "workflow_run.";
const CHANGES = [
  "created",
  "status_running",
  "status_idle",
  "status_ended",
  "error",
  "phase_started",
  "phase_ended",
] as const satisfies readonly WorkflowRunChange["type"][];

const optionalText = (value: JsonValue | undefined): string | null =>
  typeof value === "string" ? value : null;

function runError(value: JsonValue | undefined): WorkflowRunError {
  const body = object(value);
  // Kept as stored: a type a later build added re-encodes as it was (readers treat it as unknown).
  return { type: text(body.type, "unknown_error") as WorkflowRunError["type"], message: text(body.message) };
}

function runResult(value: JsonValue | undefined): WorkflowRunResult {
  const body = object(value);
  if (body.type === "error") return { type: "error", error: runError(body.error) };
  return body.type === "stopped" ? { type: "stopped" } : { type: "completed" };
}

function phases(value: JsonValue | undefined): WorkflowPhase[] {
  return (Array.isArray(value) ? value : []).map((entry) => {
    const phase = object(entry);
    return { id: text(phase.id), name: text(phase.name), description: optionalText(phase.description) };
  });
}

function change(type: (typeof CHANGES)[number], body: JsonObject): WorkflowRunChange {
  switch (type) {
    case "created":
      return {
        type,
        name: text(body.name),
        description: optionalText(body.description),
        phases: phases(body.phases),
      };
    case "status_running":
    case "status_idle":
      return { type };
    case "status_ended":
      return { type, result: runResult(body.result) };
    case "error":
      return { type, error: runError(body.error) };
    case "phase_started":
      return { type, phase: text(body.workflow_run_phase_id) };
    case "phase_ended":
      return { type, phase: text(body.workflow_run_phase_id), startedId: text(body.phase_started_id) };
  }
}

export const workflowDecoders: Record<string, (f: Fact) => WorkflowFact> = Object.fromEntries(
  CHANGES.map((type) => [
    `${PREFIX}${type}`,
    ({ id, body }: Fact): WorkflowFact => ({
      id,
      kind: "workflow_run",
      run: optionalText(body.workflow_run_id),
      change: change(type, body),
    }),
  ]),
);

function errorBody(error: WorkflowRunError): JsonObject {
  return { type: error.type, message: error.message };
}

function changeFields(c: WorkflowRunChange): JsonObject {
  switch (c.type) {
    case "created":
      return {
        name: c.name,
        description: c.description,
        phases: c.phases.map((p) => ({ id: p.id, name: p.name, description: p.description })),
      };
    case "status_running":
    case "status_idle":
      return {};
    case "status_ended":
      return {
        result:
          c.result.type === "error"
            ? { type: "error", error: errorBody(c.result.error) }
            : { type: c.result.type },
      };
    case "error":
      return { error: errorBody(c.error) };
    case "phase_started":
      return { workflow_run_phase_id: c.phase };
    case "phase_ended":
      return { workflow_run_phase_id: c.phase, phase_started_id: c.startedId };
  }
}

export function encodeWorkflow(f: WorkflowFact): Fact {
  return {
    id: f.id,
    type: `${PREFIX}${f.change.type}`,
    body: { workflow_run_id: f.run, ...changeFields(f.change) },
  };
}
