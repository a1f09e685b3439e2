/**
 * What a failed Brain request commits, for every Brain (a model provider, a remote A2A agent): its
 * span closed as failed and a `session.error`; a transient failure within the retry budget waits
 * its backoff (`rescheduled` → `running`) and lets the loop ask again, anything else ends the turn.
 */

import type { TypedFact } from "../coordinator/factVocabulary.js";
import { sleep } from "../kernel/clock.js";
import { ProviderError } from "../providers/ports.js";
import { idle, type ModelSpan, newFact, providerErrorType, sessionError, spanEnd } from "./modelFacts.js";
import type { TurnOutcome } from "./ports.js";
import { retryDelayMs } from "./retryPolicy.js";
import type { RunContext } from "./runContext.js";

export async function commitRequestFailure(
  run: RunContext,
  span: ModelSpan,
  failedAttempts: number,
  error: unknown,
  /** The `session.error` type; by default the provider error's (`model_request_failed_error`, …). */
  errorType?: string,
  /** The span's start, when it was not committed before the request: it lands with the failure. */
  start?: TypedFact,
): Promise<TurnOutcome | "continue"> {
  const opened = start ? [start] : [];
  const providerError = error instanceof ProviderError ? error : null;
  const message = error instanceof Error ? error.message : String(error);
  const type = errorType ?? providerErrorType(providerError);
  const now = run.ports.clock.now();
  const attempt = failedAttempts + 1;
  run.ports.log.warn({ runId: run.activation.runId, attempt, error: message }, "model request failed");
  if (providerError?.transient && attempt <= run.ports.retry.maxRetries) {
    const status = await run.commitLanding([
      ...opened,
      spanEnd(span, now, null, true),
      sessionError(now, type, message, "retrying"),
      newFact(now, { kind: "status_rescheduled" }),
    ]);
    if (status === "lost") return "lost_claim";
    await sleep(retryDelayMs(run.ports.retry, attempt), run.signal, run.ports.clock);
    if (run.signal.aborted) return "lost_claim";
    const resumed = await run.commitLanding([newFact(run.ports.clock.now(), { kind: "status_running" })]);
    return resumed === "lost" ? "lost_claim" : "continue";
  }
  const status = await run.commitLanding(
    [
      ...opened,
      spanEnd(span, now, null, true),
      sessionError(now, type, message, "exhausted"),
      idle(now, { kind: "retries_exhausted" }),
    ],
    "failed",
  );
  return status === "ok" ? "settled" : "lost_claim";
}
