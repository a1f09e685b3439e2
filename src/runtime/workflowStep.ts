/**
 * Workflow runs: the tool a run offers when its agent's `workflows` are enabled, and the run loop's
 * step that starts a run and moves it from phase to phase. Everything is decided from the calling
 * thread's committed facts (the plan is the call's input; where the run stands is its
 * `workflow_run` facts; a step's answer is its thread's message back), so a parent re-run after a
 * crash does exactly the next thing, with the same derived ids, and never a step twice.
 */

import type { ThreadSpawn } from "../coordinator/commitOperation.js";
import type {
  ContentBlock,
  TypedFact,
  WorkflowPhase,
  WorkflowRunChange,
} from "../coordinator/factVocabulary.js";
import type { ExecutableAgentSnapshot } from "../coordinator/ports.js";
import { foldWorkflowRuns, type WorkflowRunState, workflowEnding } from "../coordinator/workflowFold.js";
import {
  workflowPhaseIdOf,
  workflowRunIdOf,
  workflowStepRunIdOf,
  workflowStepThreadIdOf,
} from "../coordinator/workflowIds.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelToolSpec } from "../providers/ports.js";
import { agentChoiceSchema, chooseAgent } from "./agentChoice.js";
import type { Step } from "./nextStep.js";
import type { CommitStatus, RunContext } from "./runContext.js";
import { spawnFacts } from "./threadSpawning.js";
import { addRuntimeTools, type CatalogEntry } from "./toolCatalog.js";
import { toolResult } from "./toolFacts.js";
import {
  type PlanPhase,
  type PlanRefusal,
  readPlan,
  WORKFLOW_LIMITS,
  type WorkflowPlan,
} from "./workflowPlan.js";

/** The tool's name (the SDK names no tool for this; the input is the plan). */
export const WORKFLOW_TOOL = "start_workflow";

/** Offers the workflow tool when the run's agent may start workflow runs. */
export function addWorkflowTool(catalog: Map<string, CatalogEntry>, agent: ExecutableAgentSnapshot): void {
  const choice = agentChoiceSchema(agent, "workflows");
  if (choice === null) return;
  const step = {
    type: "object",
    properties: {
      ...choice.properties,
      message: { type: "string", description: "The step's task, as its agent's first message." },
    },
    required: [...choice.required, "message"],
  };
  const spec: ModelToolSpec = {
    name: WORKFLOW_TOOL,
    description:
      "Run a workflow: phases one after another, the steps of a phase in parallel, each step an agent in a " +
      "thread of its own. Each step of a later phase receives the previous phase's results with its task. " +
      "The call's result is every step's final answer, by phase.",
    input_schema: {
      type: "object",
      properties: {
        name: { type: "string", description: "The run's name." },
        description: { type: "string", description: "What the run is for." },
        phases: {
          type: "array",
          maxItems: WORKFLOW_LIMITS.phases,
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              description: { type: "string" },
              steps: { type: "array", maxItems: WORKFLOW_LIMITS.stepsPerPhase, items: step },
            },
            required: ["name", "steps"],
          },
        },
      },
      required: ["phases"],
    },
  };
  addRuntimeTools(catalog, [
    {
      spec,
      repeatable: true,
      // Never run in process: the run loop commits the run's starts and phases (`WorkflowStep`).
      run: async () => ({ text: "start_workflow runs as threads", isError: true }),
    },
  ]);
}

type ToolStep = Extract<Step, { kind: "run_tool" }>;

export class WorkflowStep {
  constructor(private readonly run: RunContext) {}

  /** Starts the call's run, or moves it on once every step of its open phase has answered. */
  async step(step: ToolStep): Promise<CommitStatus> {
    const runs = foldWorkflowRuns(this.run.facts);
    const state = runs.get(workflowRunIdOf(step.toolUseId));
    const plan = readPlan(step.input as JsonObject);
    if (state) return "error" in plan ? this.fail(step, state, plan) : this.advance(step, state, plan);
    if ("error" in plan) return this.refuse(step, plan);
    const open = [...runs.values()].filter((r) => !r.ended).length;
    if (open >= WORKFLOW_LIMITS.openRuns) {
      return this.refuse(step, {
        error: {
          type: "max_workflow_runs_error",
          message: `A thread may have at most ${WORKFLOW_LIMITS.openRuns} workflow runs that have not ended.`,
        },
        detail: `${open} workflow runs have not ended yet`,
      });
    }
    return this.start(step, plan);
  }

  private async start(step: ToolStep, plan: WorkflowPlan): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    const run = workflowRunIdOf(step.toolUseId);
    const phases: WorkflowPhase[] = plan.phases.map((phase, index) => ({
      id: workflowPhaseIdOf(step.toolUseId, index),
      name: phase.name,
      description: phase.description,
    }));
    const opened = this.openPhase(step, plan, 0, now, []);
    if ("error" in opened) return this.refuse(step, opened);
    const fact = (change: WorkflowRunChange): TypedFact => ({
      id: newId("sevt", now),
      kind: "workflow_run",
      run,
      change,
    });
    return this.run.commit(
      [
        fact({
          type: "created",
          name: plan.name ?? `workflow ${step.toolUseId}`,
          description: plan.description,
          phases,
        }),
        fact({ type: "status_running" }),
        ...opened.facts,
      ],
      undefined,
      { spawns: opened.spawns },
    );
  }

  private async advance(step: ToolStep, state: WorkflowRunState, plan: WorkflowPlan): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    const results = this.phaseResults(step.toolUseId, state.started - 1, plan);
    const closing: TypedFact[] = state.open
      ? [
          {
            id: newId("sevt", now),
            kind: "workflow_run",
            run: state.run,
            change: { type: "phase_ended", phase: state.open.phase, startedId: state.open.startedId },
          },
        ]
      : [];
    if (state.started < plan.phases.length) {
      const opened = this.openPhase(step, plan, state.started, now, results);
      // A later phase names an agent that cannot run: the run ends with the error.
      if ("error" in opened) return this.fail(step, state, opened);
      return this.run.commit([...closing, ...opened.facts], undefined, { spawns: opened.spawns });
    }
    const ending = workflowEnding({ ...state, open: null }, { type: "completed" }, () => newId("sevt", now));
    return this.run.commitLanding([
      ...closing,
      ...ending,
      toolResult(now, step.toolUseId, this.summary(step, plan), false),
    ]);
  }

  /** A phase's start: its `phase_started` and one thread per step, given the previous phase's results. */
  private openPhase(
    step: ToolStep,
    plan: WorkflowPlan,
    index: number,
    now: number,
    previous: readonly StepResult[],
  ): { facts: TypedFact[]; spawns: ThreadSpawn[] } | PlanRefusal {
    const phase = plan.phases[index] as PlanPhase;
    const run = workflowRunIdOf(step.toolUseId);
    const facts: TypedFact[] = [
      {
        id: newId("sevt", now),
        kind: "workflow_run",
        run,
        change: { type: "phase_started", phase: workflowPhaseIdOf(step.toolUseId, index) },
      },
    ];
    const spawns: ThreadSpawn[] = [];
    const context =
      previous.length === 0
        ? ""
        : `\n\nResults of the previous phase (${plan.phases[index - 1]?.name ?? ""}):\n${previous
            .map((r) => `[${r.agentName}] ${r.text}`)
            .join("\n")}`;
    for (const [s, planned] of phase.steps.entries()) {
      const choice = chooseAgent(this.run.activation.agent, "workflows", planned.choice);
      if ("error" in choice) {
        return {
          error: { type: "program_error", message: "A step of the workflow plan names no agent it may run." },
          detail: `phases[${index}].steps[${s}]: ${choice.error}`,
        };
      }
      const content: ContentBlock[] = [{ type: "text", text: `${planned.message}${context}` }];
      const started = spawnFacts(this.run, now, {
        threadId: workflowStepThreadIdOf(step.toolUseId, index, s),
        runId: workflowStepRunIdOf(step.toolUseId, index, s),
        choice,
        content,
        workflowRun: run,
      });
      facts.push(...started.facts);
      spawns.push(started.spawn);
    }
    return { facts, spawns };
  }

  /** Each step's answer of one phase, in plan order, from the messages its threads sent back. */
  private phaseResults(callId: string, index: number, plan: WorkflowPlan): StepResult[] {
    const steps = plan.phases[index]?.steps ?? [];
    return steps.map((_, s) => {
      const thread = workflowStepThreadIdOf(callId, index, s);
      let agentName = "";
      let text = "(no answer)";
      for (const fact of this.run.facts) {
        if (fact.kind === "thread_created" && fact.thread === thread) agentName = fact.agentName;
        if (fact.kind === "thread_message_received" && fact.fromThread === thread) {
          const said = fact.content.flatMap((b) =>
            b.type === "text" && typeof b.text === "string" ? [b.text] : [],
          );
          text = said.length === 0 ? "(answered with no text)" : said.join("\n");
        }
        if (fact.kind === "thread_status" && fact.thread === thread && fact.transition.to === "idle") {
          const reason = fact.transition.reason.kind;
          if (reason !== "turn_ended") text = `(the step stopped: ${reason}) ${text}`;
        }
      }
      return { agentName, text };
    });
  }

  /** The call's result: every step's answer, by phase. */
  private summary(step: ToolStep, plan: WorkflowPlan): string {
    const lines = [`Workflow ${plan.name ?? workflowRunIdOf(step.toolUseId)} completed.`];
    plan.phases.forEach((phase, index) => {
      lines.push(`Phase ${index + 1}: ${phase.name}`);
      for (const result of this.phaseResults(step.toolUseId, index, plan))
        lines.push(`- [${result.agentName}] ${result.text}`);
    });
    return lines.join("\n");
  }

  /** A run that cannot go on ends with its error, and the call's result says why. */
  private fail(step: ToolStep, state: WorkflowRunState, refusal: PlanRefusal): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    const ending = workflowEnding(state, { type: "error", error: refusal.error }, () => newId("sevt", now));
    return this.run.commitLanding([
      {
        id: newId("sevt", now),
        kind: "workflow_run",
        run: state.run,
        change: { type: "error", error: refusal.error },
      },
      ...ending,
      toolResult(now, step.toolUseId, `start_workflow: ${refusal.detail}`, true),
    ]);
  }

  /** A plan that cannot run: the run's error event (no run was created) and the call's error result. */
  private refuse(step: ToolStep, refusal: PlanRefusal): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    return this.run.commitLanding([
      {
        id: newId("sevt", now),
        kind: "workflow_run",
        run: null,
        change: { type: "error", error: refusal.error },
      },
      toolResult(now, step.toolUseId, `start_workflow: ${refusal.detail}`, true),
    ]);
  }
}

interface StepResult {
  agentName: string;
  text: string;
}
