/**
 * The model step: one model request, from its span start to the committed answer (or failure).
 * Kept apart because the request's streaming previews, stall guard, retry policy and the way an
 * answer is parked or rebased onto new input change for model reasons, not for tool reasons.
 *
 * The span's start is committed with the answer, not before the request: a request records nothing
 * until it has an outcome, which saves every turn a commit per request. What the request saw (the
 * thread version) and when it began ride on the start, so a request that new input overtook still
 * reads as the model lived it. A request a crash cut off leaves nothing: the next owner asks again,
 * and the crash counts against the run's budget, since no progress was committed.
 */

import { activeOutcome, foldOutcomes } from "../coordinator/outcomes.js";
import { newId } from "../kernel/ids.js";
import { secondsSince } from "../kernel/metrics.js";
import { type ModelRequest, type ModelResponse, ProviderError } from "../providers/ports.js";
import { modelView, viewConversation } from "./compactedView.js";
import { ContextCompaction, overflows } from "./contextCompaction.js";
import { delegatedToolLabels, modelTokens } from "./metricLabels.js";
import {
  idle,
  type ModelSpan,
  newFact,
  providerErrorType,
  responseFacts,
  spanEnd,
  spanStart,
} from "./modelFacts.js";
import { ModelPreviews } from "./modelPreviews.js";
import { hasMaxTokensSetting, maxOutputTokens } from "./outputTokens.js";
import type { TurnOutcome } from "./ports.js";
import { commitRequestFailure } from "./requestFailure.js";
import type { RunContext } from "./runContext.js";
import { StallGuard } from "./stallGuard.js";
import type { CatalogEntry } from "./toolCatalog.js";
import { captureModelInput, captureModelOutput, endModelSpan, startModelSpan } from "./traceSpans.js";
import { usageSnapshot } from "./usageTotals.js";

export class ModelStep {
  private readonly compaction: ContextCompaction;

  constructor(
    private readonly run: RunContext,
    private readonly catalog: Map<string, CatalogEntry>,
    /** The system prompt: the agent's own, and what the run adds (its skills, its memory stores). */
    private readonly system: () => string | null = () => this.run.activation.agent.definition.system,
  ) {
    this.compaction = new ContextCompaction(run);
  }

  private outcomeInProgress(): boolean {
    return activeOutcome(foldOutcomes(this.run.facts)) !== null;
  }

  async callModel(failedAttempts: number): Promise<TurnOutcome | "continue"> {
    const model = this.run.model();
    const provider = this.run.ports.providers.select(model);
    const metadata = this.run.activation.agent.definition.metadata ?? {};
    // The provider's model list is read only to cap an agent's own setting: a request without one
    // goes with the default at once, never held back by a list endpoint.
    const modelLimit = hasMaxTokensSetting(metadata) ? ((await provider.outputLimit?.(model)) ?? null) : null;
    // The model reads the compacted view: the latest summary and the facts after its boundary.
    const view = modelView(this.run.facts);
    const request: ModelRequest = {
      model,
      system: this.system(),
      messages: viewConversation(view),
      tools: [...this.catalog.values()].map((entry) => entry.spec),
      maxTokens: maxOutputTokens(metadata, modelLimit),
    };
    const window = this.run.ports.providers.contextWindow(model);
    if (overflows(request, window)) return this.compaction.compact(view, request, window, failedAttempts);
    const span: ModelSpan = {
      startId: newId("sevt", this.run.ports.clock.now()),
      provider: provider.name,
      model,
    };
    const start = spanStart(span, {
      contextSeq: this.run.knownVersion,
      startedAt: this.run.ports.clock.now(),
    });

    const sessionId = this.run.activation.sessionId;
    const previews = new ModelPreviews(
      (evidence) => this.run.ports.publish(sessionId, evidence),
      () => newId("sevt", this.run.ports.clock.now()),
    );
    let response: ModelResponse;
    const guard = new StallGuard(this.run.signal, this.run.ports.modelIdleTimeoutMs);
    const requestedAt = performance.now();
    const traced = startModelSpan(this.run.ports.tracing, provider.name, model, request.maxTokens, sessionId);
    if (this.run.capturesContent) captureModelInput(traced, this.run.facts);
    try {
      response = await provider.complete(request, {
        signal: guard.signal,
        onEvent: (event) => {
          guard.touch();
          previews.add(event);
        },
      });
    } catch (error) {
      previews.abandonAll();
      traced?.end(
        this.run.signal.aborted
          ? "aborted"
          : guard.stalled
            ? "model_stalled"
            : providerErrorType(error instanceof ProviderError ? error : null),
      );
      this.run.metrics.modelRequest(
        provider.name,
        model,
        this.run.signal.aborted ? "aborted" : "error",
        secondsSince(requestedAt),
      );
      if (this.run.signal.aborted) return "lost_claim";
      const cause = guard.stalled
        ? new ProviderError(
            "request_failed",
            `the model stream sent nothing for ${Math.round(this.run.ports.modelIdleTimeoutMs / 1000)} s`,
            { transient: true, cause: error },
          )
        : error;
      return commitRequestFailure(this.run, span, failedAttempts, cause, undefined, start);
    } finally {
      guard.dispose();
    }

    if (traced) {
      if (this.run.capturesContent) captureModelOutput(traced, response);
      endModelSpan(traced, response);
    }
    this.run.metrics.modelRequest(
      provider.name,
      model,
      "ok",
      secondsSince(requestedAt),
      modelTokens(response.usage),
    );
    for (const tool of delegatedToolLabels(response, this.catalog))
      this.run.metrics.toolCall(tool, "delegated");
    const now = this.run.ports.clock.now();
    const plan = responseFacts(response, previews.messageId, now, this.catalog, previews.toolIds);
    const output = [...previews.thinkingFacts(), ...plan.facts];
    previews.settle(output);
    const end = spanEnd(span, now, response.usage, false);
    const body = [start, ...output, end];
    const snapshot = usageSnapshot(
      this.run.activation,
      [...this.run.facts, { ...end, sessionId: "", threadId: "", seq: 0, createdAt: now }],
      now,
    );
    body.push(newFact(now, snapshot));
    // An answer that ends the attempt at an outcome in progress goes to its grader before the turn
    // can end: committed without the idle, the loop finds the evaluation due.
    const graded =
      plan.awaiting.length === 0 && response.stopReason !== "refusal" && this.outcomeInProgress();
    if (plan.serverRuns > 0 || plan.denied > 0 || graded) {
      // Work for the server first (run the allowed calls, or let the model read its denials); the
      // loop finds it in the committed facts and parks on client answers afterwards.
      const landed = await this.run.commitLanding(body);
      if (landed === "lost") previews.abandonAll();
      return landed === "lost" ? "lost_claim" : "continue";
    }
    // Parking commits the ticket (the tool uses and what each awaits) with the awaiting settle, in
    // one transaction, before any stream or client can see the request.
    const terminal =
      plan.awaiting.length > 0
        ? {
            fact: idle(now, { kind: "waiting", callIds: plan.awaiting }),
            settle: "awaiting" as const,
          }
        : response.stopReason === "refusal"
          ? { fact: idle(now, { kind: "refusal" }), settle: "done" as const }
          : { fact: idle(now, { kind: "turn_ended" }), settle: "done" as const };
    // A child thread's turn-ending commit carries its answer to the parent (`RunContext.commit`).
    const committed = await this.run.commit([...body, terminal.fact], terminal.settle);
    if (committed === "ok") return "settled";
    if (committed === "lost") {
      previews.abandonAll();
      return "lost_claim";
    }
    // New input arrived while the model answered. The answer is still true history: rebase it onto
    // the new version without the terminal part, and let the loop decide what comes next.
    const rebased = await this.run.commitLanding(body);
    if (rebased === "lost") previews.abandonAll();
    return rebased === "lost" ? "lost_claim" : "continue";
  }
}
