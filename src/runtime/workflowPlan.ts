import type { WorkflowRunError } from "../coordinator/factVocabulary.js";
import type { JsonObject, JsonValue } from "../kernel/json.js";

/**
 * A workflow run's plan as the agent writes it: named phases run one after another, and the steps of
 * a phase run in parallel, each a thread. A plan is data, never code: nothing the model writes is
 * evaluated. These are its limits and its reading.
 */

export const WORKFLOW_LIMITS = {
  phases: 8,
  stepsPerPhase: 8,
  /** Threads one run may create (the SDK's `thread_limit_error` past it). */
  threadsPerRun: 16,
  /** Runs of one thread not yet ended (the SDK's `max_workflow_runs_error` past it). */
  openRuns: 4,
  nameChars: 256,
  descriptionChars: 2_048,
  messageChars: 100_000,
} as const;

export interface PlanStep {
  /** The step's agent choice as written (`agent_name` or `agent`), resolved when its phase starts. */
  choice: JsonObject;
  message: string;
}

export interface PlanPhase {
  name: string;
  description: string | null;
  steps: PlanStep[];
}

export interface WorkflowPlan {
  name: string | null;
  description: string | null;
  phases: PlanPhase[];
}

/** A refused plan: the error the run's event shows, and the detail only the agent reads. */
export interface PlanRefusal {
  error: WorkflowRunError;
  detail: string;
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function optionalText(value: JsonValue | undefined, max: number, field: string): string | null | PlanRefusal {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" && value.length <= max) return value;
  return program(`${field} must be a string of at most ${max} characters`);
}

const program = (detail: string): PlanRefusal => ({
  error: { type: "program_error", message: "The workflow plan was refused." },
  detail,
});

const isRefusal = (value: unknown): value is PlanRefusal =>
  isObject(value as JsonValue) && "error" in (value as object) && "detail" in (value as object);

/** Reads the plan from the tool's input, or says what is wrong with it. */
export function readPlan(input: JsonObject): WorkflowPlan | PlanRefusal {
  const name = optionalText(input.name, WORKFLOW_LIMITS.nameChars, "name");
  if (isRefusal(name)) return name;
  const description = optionalText(input.description, WORKFLOW_LIMITS.descriptionChars, "description");
  if (isRefusal(description)) return description;
  const rawPhases = input.phases;
  if (!Array.isArray(rawPhases) || rawPhases.length === 0 || rawPhases.length > WORKFLOW_LIMITS.phases)
    return program(`phases must be a list of 1 to ${WORKFLOW_LIMITS.phases} phases`);
  const phases: PlanPhase[] = [];
  let threads = 0;
  for (const [p, raw] of rawPhases.entries()) {
    const at = `phases[${p}]`;
    if (!isObject(raw)) return program(`${at} must be an object`);
    const phaseName = typeof raw.name === "string" ? raw.name.trim() : "";
    if (phaseName === "" || phaseName.length > WORKFLOW_LIMITS.nameChars)
      return program(
        `${at}.name must be a non-empty string of at most ${WORKFLOW_LIMITS.nameChars} characters`,
      );
    const phaseDescription = optionalText(
      raw.description,
      WORKFLOW_LIMITS.descriptionChars,
      `${at}.description`,
    );
    if (isRefusal(phaseDescription)) return phaseDescription;
    const rawSteps = raw.steps;
    if (!Array.isArray(rawSteps) || rawSteps.length === 0 || rawSteps.length > WORKFLOW_LIMITS.stepsPerPhase)
      return program(`${at}.steps must be a list of 1 to ${WORKFLOW_LIMITS.stepsPerPhase} steps`);
    const steps: PlanStep[] = [];
    for (const [s, step] of rawSteps.entries()) {
      if (!isObject(step)) return program(`${at}.steps[${s}] must be an object`);
      const message = typeof step.message === "string" ? step.message : "";
      if (message.trim() === "" || message.length > WORKFLOW_LIMITS.messageChars)
        return program(
          `${at}.steps[${s}].message must be a non-empty string of at most ${WORKFLOW_LIMITS.messageChars} characters`,
        );
      const choice: JsonObject = {};
      if (step.agent_name !== undefined) choice.agent_name = step.agent_name;
      if (step.agent !== undefined) choice.agent = step.agent;
      steps.push({ choice, message });
    }
    threads += steps.length;
    phases.push({ name: phaseName, description: phaseDescription, steps });
  }
  if (threads > WORKFLOW_LIMITS.threadsPerRun) {
    return {
      error: {
        type: "thread_limit_error",
        message: `A workflow run may create at most ${WORKFLOW_LIMITS.threadsPerRun} threads.`,
      },
      detail: `the plan has ${threads} steps; a run may create at most ${WORKFLOW_LIMITS.threadsPerRun} threads`,
    };
  }
  return { name, description, phases };
}
