/**
 * Context compaction: when the model's view of a thread would not fit the model's context window
 * (with room left for the answer), its older part is summarized by the model, in a request of its
 * own, and the summary is committed as `context_compacted` through the fence with the boundary it
 * replaces. Later requests read the summary and the facts after the boundary (`compactedView.ts`);
 * the committed history stays as it was. A summary a crash cut off before its commit is asked for
 * again by the next owner; a committed one is read, never redone. A turn whose view still does not
 * fit after `MAX_COMPACTIONS_IN_A_ROW` compactions ends with `compaction_limit_reached_error`.
 */

import { newId } from "../kernel/ids.js";
import { secondsSince } from "../kernel/metrics.js";
import { type ModelRequest, type ModelResponse, ProviderError } from "../providers/ports.js";
import { estimateRequestTokens } from "../providers/tokenEstimate.js";
import {
  compactionCut,
  compactionsInARow,
  MAX_COMPACTIONS_IN_A_ROW,
  type ModelView,
} from "./compactedView.js";
import { buildConversation } from "./conversation.js";
import { modelTokens } from "./metricLabels.js";
import { idle, type ModelSpan, newFact, providerErrorType, sessionError, spanStart } from "./modelFacts.js";
import type { TurnOutcome } from "./ports.js";
import { commitRequestFailure } from "./requestFailure.js";
import type { RunContext } from "./runContext.js";
import { StallGuard } from "./stallGuard.js";
import { summaryRequest, summaryTokens } from "./summaryRequest.js";
import { usageSnapshot } from "./usageTotals.js";

/** Whether a request (its estimate plus the room its answer may take) overflows the window. */
export function overflows(request: ModelRequest, window: number): boolean {
  return estimateRequestTokens(request) + request.maxTokens > window;
}

export class ContextCompaction {
  constructor(private readonly run: RunContext) {}

  /**
   * Compacts `view`, whose `request` overflows `window`: commits a compaction and lets the loop ask
   * again, or ends the turn at the limit. A failed summarization is a failed model request.
   */
  async compact(
    view: ModelView,
    request: ModelRequest,
    window: number,
    failedAttempts: number,
  ): Promise<TurnOutcome | "continue"> {
    const run = this.run;
    const fixed = estimateRequestTokens({ system: request.system, messages: [], tools: request.tools });
    // What the messages may take: the window less the answer's room, the system prompt and tools.
    const messageRoom = Math.max(0, window - request.maxTokens - fixed);
    const inARow = compactionsInARow(run.facts);
    if (inARow >= MAX_COMPACTIONS_IN_A_ROW)
      return this.limitReached(
        `the context was compacted ${inARow} times in a row and the conversation still does not fit the model's context window (${window} tokens)`,
      );
    if (messageRoom === 0)
      return this.limitReached(
        `the system prompt, the tools and the answer's room alone take ${fixed + request.maxTokens} of the model's context window (${window} tokens)`,
      );
    // Half the room is kept verbatim; the rest is left to the summary and the turns to come.
    const cut =
      compactionCut(view, Math.floor(messageRoom / 2)) ?? (view.summary === null ? null : view.throughSeq);
    const replaced = cut === null ? [] : buildConversation(view.facts.filter((f) => f.seq <= cut));
    if (cut === null || (view.summary === null && replaced.length === 0))
      return this.limitReached(
        `the request does not fit the model's context window (${window} tokens) and holds no history to compact`,
      );

    const model = request.model;
    const provider = run.ports.providers.select(model);
    const span: ModelSpan = { startId: newId("sevt", run.ports.clock.now()), provider: provider.name, model };
    const start = spanStart(span, { contextSeq: run.knownVersion, startedAt: run.ports.clock.now() });
    const summarization = summaryRequest(model, view.summary, replaced, {
      window,
      summaryTokens: summaryTokens(messageRoom),
    });
    const guard = new StallGuard(run.signal, run.ports.modelIdleTimeoutMs);
    const requestedAt = performance.now();
    let response: ModelResponse;
    try {
      response = await provider.complete(summarization, {
        signal: guard.signal,
        onEvent: () => guard.touch(),
      });
    } catch (error) {
      run.metrics.modelRequest(
        provider.name,
        model,
        run.signal.aborted ? "aborted" : "error",
        secondsSince(requestedAt),
      );
      // Nothing was committed: the next owner summarizes again.
      if (run.signal.aborted) return "lost_claim";
      const cause = guard.stalled
        ? new ProviderError("request_failed", "the model stream went silent while summarizing the context", {
            transient: true,
            cause: error,
          })
        : error;
      const type = providerErrorType(cause instanceof ProviderError ? cause : null);
      return commitRequestFailure(run, span, failedAttempts, cause, type, start);
    } finally {
      guard.dispose();
    }
    run.metrics.modelRequest(
      provider.name,
      model,
      "ok",
      secondsSince(requestedAt),
      modelTokens(response.usage),
    );

    const now = run.ports.clock.now();
    const summary = response.content
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("\n")
      .trim();
    const compacted = newFact(now, {
      kind: "context_compacted",
      summary,
      throughSeq: cut,
      model,
      usage: {
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        cacheReadInputTokens: response.usage.cacheReadInputTokens,
        cacheCreationInputTokens: response.usage.cacheCreationInputTokens,
      },
    });
    // Input appended meanwhile does not make the summary less true: it lands on the new version.
    const landed = await run.commitLanding([
      compacted,
      newFact(
        now,
        usageSnapshot(
          run.activation,
          [...run.facts, { ...compacted, sessionId: "", threadId: "", seq: 0, createdAt: now }],
          now,
        ),
      ),
    ]);
    return landed === "ok" ? "continue" : "lost_claim";
  }

  /** Ends the turn: the compaction limit, as the SDK shapes it (the thread idles, retries exhausted). */
  private async limitReached(reason: string): Promise<TurnOutcome> {
    const now = this.run.ports.clock.now();
    const status = await this.run.commitLanding(
      [
        sessionError(now, "compaction_limit_reached_error", `${reason}; the turn was stopped`, "exhausted"),
        idle(now, { kind: "retries_exhausted" }),
      ],
      "failed",
    );
    return status === "ok" ? "settled" : "lost_claim";
  }
}
