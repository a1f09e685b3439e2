/**
 * The run's committed history and its one way to change it: the fenced commit. Every step (model,
 * Hand tool, MCP, sandbox provisioning) reads the same `facts` and commits through here, so the
 * history a step decides from is always the one its last commit (or catch-up) left behind, and the
 * operation ids (`op_<run>_v<expectedVersion>`) are derived in one place.
 */

import type { CommitOperation, CommitRejection, RunOutcome } from "../coordinator/commitOperation.js";
import type { EnvironmentConfig } from "../coordinator/environmentConfig.js";
import { decodeCommitted, encodeFact } from "../coordinator/factCodec.js";
import type { CommittedFact, Fact } from "../coordinator/facts.js";
import type { CommittedTypedFact, TypedFact } from "../coordinator/factVocabulary.js";
import type { Activation } from "../coordinator/ports.js";
import { Backoff, type BackoffPolicy } from "../kernel/backoff.js";
import { sleep } from "../kernel/clock.js";
import { recordsContent } from "../kernel/contentCapture.js";
import { type Metrics, noopMetrics } from "../kernel/metrics.js";
import type { ModelSpan } from "./modelFacts.js";
import type { RuntimePorts } from "./ports.js";
import { threadAsks } from "./threadAsks.js";
import { threadAnswer } from "./threadSpawning.js";

export type CommitStatus = "ok" | "conflict" | "lost";

/** A commit lost to transport or database trouble: five attempts, 200 ms doubling between them. */
const COMMIT_RETRY: BackoffPolicy = {
  baseMs: 200,
  maxMs: Number.POSITIVE_INFINITY,
  jitter: "none",
  maxAttempts: 5,
};

/** What a commit writes on other threads: children it spawns, or a child's answer to its parent. */
export type ThreadWrites = Pick<CommitOperation, "spawns" | "answer">;

export class RunContext {
  /** The thread's committed history as this run knows it, in `seq` order. */
  readonly facts: CommittedTypedFact[] = [];
  private version = 0;
  readonly metrics: Metrics;
  /**
   * Whether this slice's spans carry content: the operator's ceiling on this process
   * (`AWAKEN_TRACE_CONTENT=on`) and the claim's decision (the session asked, its subject consented).
   */
  readonly capturesContent: boolean;

  constructor(
    readonly activation: Activation,
    readonly ports: RuntimePorts,
    readonly signal: AbortSignal,
  ) {
    this.metrics = ports.metrics ?? noopMetrics;
    this.capturesContent =
      ports.tracing !== undefined && recordsContent(ports.traceContent, activation.captureContent);
  }

  /** Takes committed facts (the history a claim delivered, or a catch-up read) as known history. */
  receive(committed: CommittedFact[]): void {
    for (const fact of committed) {
      this.facts.push(decodeCommitted(fact));
      this.version = fact.seq;
    }
  }

  /**
   * Commits facts that record what already happened (a failure, a finished answer, a status
   * change), which stay true whatever input was appended meanwhile: a version conflict is not a
   * reason to drop them, so they are retried on the new version until they land or the claim is lost.
   */
  async commitLanding(
    facts: TypedFact[],
    settle?: RunOutcome,
    threads?: ThreadWrites,
  ): Promise<"ok" | "lost"> {
    for (;;) {
      const status = await this.commit(facts, settle, threads);
      if (status !== "conflict") return status;
    }
  }

  /**
   * One fenced commit. The operation id is derived from the run and the expected version, so a
   * retry after a lost response is recognised by the store and answered with the original receipt.
   */
  async commit(facts: TypedFact[], settle?: RunOutcome, threads?: ThreadWrites): Promise<CommitStatus> {
    if (settle === "done" && !threads?.answer) {
      // A child thread's turn ends with its answer on its parent's history, in the same commit,
      // however it ended (its model's answer, the budget, exhausted retries, a failed sandbox): the
      // parent never waits on it.
      const stop = facts.find((f) => f.kind === "status_idle");
      const answered =
        stop?.kind === "status_idle"
          ? threadAnswer(
              this.facts,
              this.activation.threadId,
              this.activation.agent.definition.name,
              this.ports.clock.now(),
              facts,
              stop.reason,
            )
          : null;
      if (answered) {
        facts = [...facts, answered.sent];
        threads = { ...threads, answer: answered.answer };
      }
    }
    if (settle === "awaiting" && !threads?.answer) {
      // A child parking on a client's answer shows its asks on the primary's history, in this commit.
      const asks = threadAsks(
        this.facts,
        this.activation.threadId,
        this.activation.agent.definition.name,
        this.ports.clock.now(),
        facts,
      );
      if (asks) threads = { ...threads, answer: asks };
    }
    const op = {
      ...threads,
      opId: `op_${this.activation.runId}_v${this.version}`,
      runId: this.activation.runId,
      threadId: this.activation.threadId,
      owner: this.activation.owner,
      epoch: this.activation.epoch,
      expectedVersion: this.version,
      facts: facts.map(encodeFact),
      ...(settle ? { settle } : {}),
    };
    const backoff = new Backoff(COMMIT_RETRY, { clock: this.ports.clock });
    for (;;) {
      try {
        const result = await this.ports.commit(op);
        if (result.ok) {
          this.metrics.commit("ok");
          if (settle && !result.duplicate) this.metrics.runSettled(settle);
          if (!result.duplicate && result.receipt.versionAfter === op.expectedVersion + facts.length) {
            // Our facts landed exactly at the expected version: we know the history without a read.
            this.adopt(op.facts, result.receipt.committedAt);
          } else {
            await this.catchUp();
          }
          return "ok";
        }
        return this.rejected(result.rejection);
      } catch (error) {
        // Transport or database trouble: the commit may or may not have happened. Retrying the
        // same operation is safe (same id, same hash).
        const wait = backoff.next();
        if (wait === null || this.signal.aborted) throw error;
        this.ports.log.warn(
          { runId: op.runId, attempt: backoff.failures, error: String(error) },
          "commit failed; retrying",
        );
        await sleep(wait, this.signal, this.ports.clock);
      }
    }
  }

  /** The thread version this run's history reaches (the seq of its last known fact). */
  get knownVersion(): number {
    return this.version;
  }

  /** The span a dead owner opened, named as its start recorded it. */
  danglingSpan(startId: string): ModelSpan {
    const start = this.facts.find((fact) => fact.id === startId);
    return start?.kind === "model_request_start"
      ? { startId, provider: start.provider, model: start.model }
      : { startId, provider: "unknown", model: this.model() };
  }

  model(): string {
    return this.activation.agent.definition.model.id;
  }

  /** The pinned environment revision's configuration (sandbox tier, networking, provisioning). */
  environment(): EnvironmentConfig {
    return this.activation.environment.config;
  }

  private async rejected(rejection: CommitRejection): Promise<CommitStatus> {
    this.metrics.commit(rejection.kind === "version_conflict" ? "version_conflict" : "lost_claim");
    this.metrics.fenceRejected(rejection.kind);
    if (rejection.kind === "version_conflict") {
      await this.catchUp();
      return "conflict";
    }
    this.ports.log.info({ runId: this.activation.runId, rejection }, "claim lost; abandoning run");
    return "lost";
  }

  private adopt(facts: Fact[], committedAt: number): void {
    for (const fact of facts) {
      this.version += 1;
      // Read back as any reader of the stored row would: the run decides from the history itself.
      this.facts.push(
        decodeCommitted({
          ...fact,
          sessionId: this.activation.sessionId,
          threadId: this.activation.threadId,
          seq: this.version,
          createdAt: committedAt,
        }),
      );
    }
  }

  private async catchUp(): Promise<void> {
    const fresh = await this.ports.readThread(this.activation.threadId, this.version);
    this.receive(fresh);
  }
}
