/**
 * The run loop: asks `nextStep` what the committed history calls for and dispatches to the step
 * that does it (model, Hand tool, MCP), until the run settles or the claim is lost. Only the loop
 * and the guards around it (the crash budget, eager provisioning, the run's resources) live here;
 * each step and the shared commit plumbing have their own file, so a change to one step does not
 * touch the loop every run goes through.
 */

import type { Activation } from "../coordinator/ports.js";
import { meterOfHistory } from "../coordinator/sessionMeter.js";
import { a2aCardUrl } from "../kernel/a2aModel.js";
import { acpRuntimeName } from "../kernel/acpModel.js";
import { A2aDelegateStep } from "./a2aDelegateStep.js";
import { AcpBrainStep } from "./acp/acpBrainStep.js";
import { HARNESS_CALL_CUT, harnessResult } from "./acp/harnessFacts.js";
import { HandToolStep } from "./handToolStep.js";
import { McpStep } from "./mcpStep.js";
import { idle, sessionError, spanEnd } from "./modelFacts.js";
import { ModelStep } from "./modelStep.js";
import { nextStep } from "./nextStep.js";
import { abandonedEvaluation, OutcomeStep } from "./outcomeStep.js";
import type { RuntimePorts, TurnOutcome } from "./ports.js";
import { ResourceRealization } from "./resourceRealization.js";
import { type CommitStatus, RunContext } from "./runContext.js";
import { SandboxProvisioning } from "./sandboxProvisioning.js";
import { SecretEgress } from "./secretEgress.js";
import { budgetInForce, budgetReached } from "./sessionBudget.js";
import { systemPrompt } from "./skillCatalog.js";
import { addSpawnTool, parkedOnThreads, SPAWN_TOOL, SpawnStep } from "./threadSpawning.js";
import { toolCatalog } from "./toolCatalog.js";
import { mcpToolResult } from "./toolFacts.js";
import { addWorkflowTool, WORKFLOW_TOOL, WorkflowStep } from "./workflowStep.js";

/**
 * Runs one claimed activation until the run settles or the claim is lost. Every decision is taken
 * from committed facts (`nextStep`), every change goes through the commit fence, and a rejected
 * commit means another owner (or a cancel) took over: the runner stops without side effects.
 */
export class TurnRunner {
  /** The committed history and the commit fence, shared by every step. */
  private readonly context: RunContext;
  /** The session's `environment_variable` credentials: the sandbox's proxy opens them through it. */
  private readonly secrets: SecretEgress;
  private readonly mcp: McpStep;
  private readonly sandbox: SandboxProvisioning;
  private readonly handTools: HandToolStep;
  private readonly model: ModelStep;
  /** An outcome's grader, after each attempt of the agent. */
  private readonly outcomes: OutcomeStep;
  /** The session's resources and the agent's skills, realized once at the run's start. */
  private readonly resources: ResourceRealization;
  /** Set when the agent's model is a remote A2A agent: it answers every turn instead of a model. */
  private readonly delegate: A2aDelegateStep | null;
  /** Set when the agent's model is an ACP runtime: that harness, in the sandbox, answers every turn. */
  private readonly harness: AcpBrainStep | null;
  /** Spawns child threads for the agent's roster (`spawn_agent` calls). */
  private readonly spawner: SpawnStep;
  private readonly workflows: WorkflowStep;

  constructor(
    private readonly activation: Activation,
    private readonly ports: RuntimePorts,
    private readonly signal: AbortSignal,
  ) {
    this.context = new RunContext(activation, ports, signal);
    // One catalog for the whole run: the MCP step adds its servers' tools, the model is offered them.
    const catalog = toolCatalog(activation.agent.definition, activation.environment.config);
    addSpawnTool(catalog, activation.agent);
    addWorkflowTool(catalog, activation.agent);
    this.spawner = new SpawnStep(this.context);
    this.workflows = new WorkflowStep(this.context);
    this.secrets = new SecretEgress(ports, activation, signal);
    this.resources = new ResourceRealization(this.context, catalog);
    this.sandbox = new SandboxProvisioning(this.context, this.secrets, () => this.resources.sandboxParts());
    this.mcp = new McpStep(this.context, catalog, this.sandbox);
    this.handTools = new HandToolStep(this.context, catalog, this.sandbox, this.secrets, this.resources);
    this.model = new ModelStep(this.context, catalog, () =>
      systemPrompt(activation.agent.definition.system, this.resources.prompt()),
    );
    this.outcomes = new OutcomeStep(this.context);
    const cardUrl = a2aCardUrl(activation.agent.definition.model.id);
    this.delegate = cardUrl === null ? null : new A2aDelegateStep(this.context, cardUrl);
    const runtime = acpRuntimeName(activation.agent.definition.model.id);
    this.harness =
      runtime === null ? null : new AcpBrainStep(this.context, this.sandbox, ports.acp, runtime, catalog);
  }

  async run(): Promise<TurnOutcome> {
    try {
      return await this.runTurns();
    } finally {
      // MCP connections live as long as the run that opened them (their credential with them);
      // so does the egress proxy's way to open this session's secrets.
      this.secrets.close();
      await this.mcp.close();
    }
  }

  private async runTurns(): Promise<TurnOutcome> {
    const context = this.context;
    // The claim delivered the committed history. Anything committed since is caught up by the first
    // commit's version check, so no read is needed here.
    context.receive(this.activation.history);
    if (this.activation.crashCount > this.ports.crashBudget) {
      const now = this.ports.clock.now();
      // A request a dead owner left open is closed in the same commit, so it never dangles into
      // the session's next turn.
      const step = nextStep(context.facts);
      const close =
        step.kind === "close_dangling_request"
          ? [spanEnd(context.danglingSpan(step.startId), now, null, true)]
          : step.kind === "evaluate_outcome"
            ? abandonedEvaluation(step.outcome, now)
            : [];
      const status = await context.commitLanding(
        [
          ...close,
          sessionError(
            now,
            "unknown_error",
            `the run was interrupted by ${this.activation.crashCount} worker crashes without progress; it was stopped`,
            "exhausted",
          ),
          idle(now, { kind: "retries_exhausted" }),
        ],
        "failed",
      );
      if (status === "ok") context.metrics.crashBudgetExhausted();
      return status === "ok" ? "settled" : "lost_claim";
    }
    // Resources first: mounted ones are part of the sandbox's spec, and need it before the model.
    const realized = await this.resources.realize();
    if (realized !== "ok") return realized === "failed" ? "settled" : "lost_claim";
    const provisioned = await this.sandbox.provisionEagerly(this.resources.needsSandbox);
    if (provisioned !== "ok") return provisioned === "failed" ? "settled" : "lost_claim";
    for (;;) {
      if (this.signal.aborted) return "lost_claim";
      const step = nextStep(context.facts);
      const now = this.ports.clock.now();
      let status: CommitStatus;
      switch (step.kind) {
        case "close_dangling_request":
          // The previous owner died mid-request: record the request as failed, then ask again.
          status = await context.commit([spanEnd(context.danglingSpan(step.startId), now, null, true)]);
          break;
        case "close_harness_calls":
          // A harness that is gone left its own calls open: they are closed, never run by the server.
          status = await context.commit(
            step.callIds.map((id) => harnessResult(now, id, HARNESS_CALL_CUT, true)),
          );
          break;
        case "run_tool": {
          if (step.mcpServerName !== undefined) {
            const ready = await this.mcp.ensureMcp([
              mcpToolResult(
                now,
                step.toolUseId,
                [
                  {
                    type: "text",
                    text: `MCP server ${step.mcpServerName} is unavailable; the call did not run.`,
                  },
                ],
                true,
              ),
            ]);
            if (ready !== "ok") return ready === "lost" ? "lost_claim" : "settled";
          }
          const result =
            step.mcpServerName !== undefined
              ? await this.mcp.runMcpTool(step, step.mcpServerName)
              : step.name === SPAWN_TOOL
                ? await this.spawner.spawn(step)
                : step.name === WORKFLOW_TOOL
                  ? await this.workflows.step(step)
                  : await this.handTools.runTool(step);
          if (result === "lost") return "lost_claim";
          status = result;
          break;
        }
        case "await": {
          if ((await this.writeBack()) === "lost") return "lost_claim";
          // Waiting on child threads only, the run parks without an idle: the session works on. Its
          // park still takes a version of the history, so a child's answer planned on the version
          // before it cannot land as well (the one that loses reads and decides again) and leave
          // the run parked with nothing left to wait for.
          status = await context.commit(
            step.eventIds.length === 0
              ? [parkedOnThreads(now)]
              : [idle(now, { kind: "waiting", callIds: step.eventIds })],
            "awaiting",
          );
          if (status === "ok") return "settled";
          break;
        }
        case "evaluate_outcome": {
          const result = await this.outcomes.evaluate(step.outcome);
          if (result === "settled" || result === "lost_claim") return result;
          status = "ok";
          break;
        }
        case "finish": {
          // The turn's last commit point: whatever reached a read-write store's directory since the
          // last tool step is saved (or recorded as not taken) before the turn ends.
          if ((await this.writeBack()) === "lost") return "lost_claim";
          // A child thread's turn-ending commit carries its answer to the parent (`RunContext.commit`).
          status = await context.commit([idle(now, { kind: "turn_ended" })], "done");
          if (status === "ok") return "settled";
          break;
        }
        case "call_model": {
          if (this.overBudget()) {
            // No request starts once the budget is spent: the turn ends, committed like any idle.
            if ((await this.writeBack()) === "lost") return "lost_claim";
            status = await context.commit([idle(now, { kind: "budget_reached" })], "done");
            if (status === "ok") return "settled";
            break;
          }
          if (this.harness) {
            // The agent's MCP toolsets' tools are in the catalog the harness is offered at launch.
            const ready = await this.mcp.ensureMcp([]);
            if (ready !== "ok") return ready === "lost" ? "lost_claim" : "settled";
            const result = await this.harness.turn(step.failedAttempts);
            if (result === "settled" || result === "lost_claim") return result;
            status = "ok";
            break;
          }
          if (this.delegate) {
            const result = await this.delegate.callRemote(step.failedAttempts);
            if (result === "settled" || result === "lost_claim") return result;
            status = "ok";
            break;
          }
          const ready = await this.mcp.ensureMcp([]);
          if (ready !== "ok") return ready === "lost" ? "lost_claim" : "settled";
          // A commit point too: what reached a read-write store's directory outside a Hand tool
          // step (a stdio MCP server in the sandbox) is saved before the model is asked again.
          if ((await this.writeBack()) === "lost") return "lost_claim";
          const result = await this.model.callModel(step.failedAttempts);
          if (result === "settled" || result === "lost_claim") return result;
          status = "ok";
          break;
        }
      }
      if (status === "lost") return "lost_claim";
    }
  }

  /** Whether the session's committed list cost has reached the budget in force (none: never). */
  private overBudget(): boolean {
    const budget = budgetInForce(this.activation, this.context.facts);
    return budget !== null && budgetReached(budget, meterOfHistory(this.context.facts));
  }

  /** Writes back read-write memory directories and records the outcomes (a commit point of its own). */
  private async writeBack(): Promise<"ok" | "lost"> {
    // Outside a tool step there is no result to say it in: the model's next request says it.
    const back = await this.resources.writeBack("next_request");
    if (back === "lost") return "lost";
    if (!back.fact) return "ok";
    return this.context.commitLanding([back.fact]);
  }
}
