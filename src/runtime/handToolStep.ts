/**
 * The Hand tool step: one built-in tool call (bash, read, write, …) in the session's sandbox. Kept
 * apart because its crash discipline (intent committed before, result after, re-run only when
 * repeatable) and its sandbox and credential errors are its own reasons to change.
 */

import type { TypedFact } from "../coordinator/factVocabulary.js";
import { secondsSince } from "../kernel/metrics.js";
import { ResourceClaimLostError } from "../resources/ports.js";
import { SandboxUnavailableError } from "../sandbox/ports.js";
import type { HandToolResult } from "./hand/index.js";
import type { Step } from "./nextStep.js";
import type { ResourceRealization } from "./resourceRealization.js";
import type { CommitStatus, RunContext } from "./runContext.js";
import type { SandboxProvisioning } from "./sandboxProvisioning.js";
import type { SecretEgress } from "./secretEgress.js";
import type { CatalogEntry } from "./toolCatalog.js";
import { indeterminateText, toolExecution, toolResult } from "./toolFacts.js";
import { captureToolArguments, captureToolResult, endToolSpan, startToolSpan } from "./traceSpans.js";

export class HandToolStep {
  constructor(
    private readonly run: RunContext,
    private readonly catalog: Map<string, CatalogEntry>,
    private readonly sandbox: SandboxProvisioning,
    private readonly secrets: SecretEgress,
    /** The run's resources: read-write memory directories are written back after each call. */
    private readonly resources?: ResourceRealization,
  ) {}

  /**
   * One Hand tool call, made safe against crashes: its intent (with the attempt number) is
   * committed before it runs and its result after. A call an earlier owner started and never
   * finished is run again only when the tool is repeatable; otherwise the model is told its outcome
   * is unknown. After a lost claim the sandbox command is killed and nothing is
   * written back.
   */
  async runTool(step: Extract<Step, { kind: "run_tool" }>): Promise<CommitStatus> {
    const entry = this.catalog.get(step.name);
    const now = this.run.ports.clock.now();
    if (entry?.kind !== "hand" && entry?.kind !== "runtime") {
      return this.run.commitLanding([
        toolResult(now, step.toolUseId, `the ${step.name} tool is not available to this session`, true),
      ]);
    }
    if (step.attempts > 0 && !entry.tool.repeatable) {
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, toolUseId: step.toolUseId, tool: step.name },
        "tool call interrupted by a crash is not repeatable; reporting it as indeterminate",
      );
      this.run.metrics.toolCall(step.name, "indeterminate");
      return this.run.commitLanding([toolResult(now, step.toolUseId, indeterminateText(step.name), true)]);
    }
    // A conflict here means new input (say an interrupt) landed first: decide again from it.
    const started = await this.run.commit([toolExecution(now, step.toolUseId, step.attempts + 1)]);
    if (started !== "ok") return started;

    let outcome: HandToolResult;
    let realized: TypedFact | null = null;
    const startedAt = performance.now();
    const traced = startToolSpan(this.run.ports.tracing, step.name, "function", step.toolUseId);
    const captured = this.run.capturesContent ? traced : undefined;
    captureToolArguments(captured, step.input);
    try {
      if (entry.kind === "runtime") {
        // Answered in process from the run's resources (no sandbox), under the run's claim.
        outcome = await entry.tool.run(step.input, this.run.signal);
      } else {
        const provisioned = await this.sandbox.provision();
        realized = provisioned.fact;
        outcome = await entry.tool.run(provisioned.sandbox, step.input, this.run.signal);
      }
    } catch (error) {
      if (this.run.signal.aborted) {
        endToolSpan(traced, "aborted");
        return "lost";
      }
      const message = error instanceof Error ? error.message : String(error);
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, tool: step.name, error: message },
        "tool failed",
      );
      if (error instanceof ResourceClaimLostError) {
        endToolSpan(traced, "aborted");
        return "lost";
      }
      outcome = {
        text:
          error instanceof SandboxUnavailableError
            ? `the sandbox for this session could not be started: ${message}`
            : `the ${step.name} tool failed: ${message}`,
        isError: true,
      };
    }
    captureToolResult(captured, [{ type: "text", text: outcome.text }]);
    endToolSpan(traced, this.run.signal.aborted ? "aborted" : outcome.isError ? "error" : "ok");
    if (this.run.signal.aborted) return "lost";
    this.run.metrics.toolCall(step.name, outcome.isError ? "error" : "ok", secondsSince(startedAt));
    // The call's changes to read-write memory directories are saved under the claim before its
    // result is committed; what did not take is said in the result the model reads next.
    const back = this.resources ? await this.resources.writeBack("tool_result") : { notes: [], fact: null };
    if (back === "lost") return "lost";
    const text =
      back.notes.length === 0
        ? outcome.text
        : `${outcome.text}\n\n[memory] ${back.notes.join("\n[memory] ")}`;
    const finishedAt = this.run.ports.clock.now();
    const result = toolResult(finishedAt, step.toolUseId, text, outcome.isError);
    // Credentials the sandbox could not use (credential_host_unreachable_error) follow the result.
    const errors = this.secrets.takeErrors(finishedAt, this.run.facts);
    return this.run.commitLanding([
      ...(realized ? [realized] : []),
      ...(back.fact ? [back.fact] : []),
      result,
      ...errors,
    ]);
  }
}
