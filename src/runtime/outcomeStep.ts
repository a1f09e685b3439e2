/**
 * The outcome step: one grader evaluation of the agent's attempt, from its span start to the
 * verdict. The grader is its own model request in a separate context (a system prompt that asks
 * for a parseable verdict, one message with the task, the rubric and the attempt), never the
 * agent's conversation.
 *
 * Exactly one verdict per evaluation: the start is committed first, the verdict is one fenced
 * commit, and an owner that finds a start without an end (its predecessor died grading) grades
 * again under that start instead of opening another. An interrupt's end, written with the cancel,
 * makes this owner's verdict a stale commit that never lands.
 */

import type { OutcomeVerdict, TypedFact } from "../coordinator/factVocabulary.js";
import type { OutcomeState } from "../coordinator/outcomes.js";
import { sleep } from "../kernel/clock.js";
import { newId } from "../kernel/ids.js";
import {
  GRADER_SYSTEM_PROMPT,
  type GraderVerdict,
  graderRequestText,
  parseGraderVerdict,
} from "../providers/outcomeGrading.js";
import { type ModelUsage, ProviderError } from "../providers/ports.js";
import type { TurnOutcome } from "./ports.js";
import { retryDelayMs } from "./retryPolicy.js";
import type { RunContext } from "./runContext.js";
import { StallGuard } from "./stallGuard.js";

const GRADER_MAX_TOKENS = 1024;
/** The attempt's text the grader reads at most (its end: the agent's latest words). */
const ATTEMPT_CHARS = 100_000;
/** How often a grader still at work commits `span.outcome_evaluation_ongoing`. */
export const DEFAULT_OUTCOME_HEARTBEAT_MS = 10_000;

type Graded = { verdict: GraderVerdict; explanation: string };

export class OutcomeStep {
  constructor(private readonly run: RunContext) {}

  async evaluate(outcome: OutcomeState): Promise<TurnOutcome | "continue"> {
    const now = this.run.ports.clock.now();
    let start = outcome.openStart;
    if (!start) {
      const fact: TypedFact = {
        id: newId("sevt", now),
        kind: "outcome_evaluation_start",
        outcomeId: outcome.outcomeId,
        iteration: outcome.iteration,
      };
      if ((await this.run.commitLanding([fact])) === "lost") return "lost_claim";
      start = { id: fact.id, iteration: outcome.iteration };
    }
    const usage: ModelUsage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    };
    const heartbeat = this.heartbeat(outcome.outcomeId, start.iteration);
    let graded: Graded;
    try {
      graded = await this.grade(outcome, usage);
    } finally {
      heartbeat.stop();
    }
    if ((await heartbeat.settled()) === "lost" || this.run.signal.aborted) return "lost_claim";
    const result: OutcomeVerdict =
      graded.verdict === "needs_revision" && start.iteration + 1 >= outcome.maxIterations
        ? "max_iterations_reached"
        : graded.verdict;
    const end: TypedFact = {
      id: newId("sevt", this.run.ports.clock.now()),
      kind: "outcome_evaluation_end",
      outcomeId: outcome.outcomeId,
      startId: start.id,
      iteration: start.iteration,
      result,
      explanation: graded.explanation,
      model: this.run.model(),
      usage,
    };
    // The loop reads the verdict from history: feedback to revise, one last turn, or the turn's end.
    return (await this.run.commitLanding([end])) === "lost" ? "lost_claim" : "continue";
  }

  /** Asks the grader, retrying transient failures as a model turn does; unusable → `failed`. */
  private async grade(outcome: OutcomeState, usage: ModelUsage): Promise<Graded> {
    const model = this.run.model();
    const request = {
      model,
      system: GRADER_SYSTEM_PROMPT,
      messages: [
        {
          role: "user" as const,
          content: [
            {
              type: "text" as const,
              text: graderRequestText({
                task: outcome.description,
                rubric: outcome.rubric.content,
                attempt: this.attempt(outcome),
              }),
            },
          ],
        },
      ],
      tools: [],
      maxTokens: GRADER_MAX_TOKENS,
    };
    const policy = this.run.ports.retry;
    for (let attempt = 0; ; attempt++) {
      const guard = new StallGuard(this.run.signal, this.run.ports.modelIdleTimeoutMs);
      try {
        const provider = this.run.ports.providers.select(model);
        const response = await provider.complete(request, {
          signal: guard.signal,
          onEvent: () => guard.touch(),
        });
        add(usage, response.usage);
        const text = response.content
          .flatMap((block) => (block.type === "text" ? [block.text] : []))
          .join("");
        const parsed = parseGraderVerdict(text);
        return (
          parsed ?? {
            verdict: "failed",
            explanation:
              "The grader's answer held no verdict that could be read; the outcome was not evaluated.",
          }
        );
      } catch (error) {
        if (this.run.signal.aborted) return { verdict: "failed", explanation: "aborted" };
        const transient = guard.stalled || (error instanceof ProviderError && error.transient);
        if (!transient || attempt >= policy.maxRetries) {
          const kind = error instanceof ProviderError ? error.kind : "unknown_error";
          this.run.ports.log.warn(
            { runId: this.run.activation.runId, outcomeId: outcome.outcomeId, kind },
            "outcome grader failed",
          );
          return {
            verdict: "failed",
            explanation: `The grader could not evaluate the attempt: its model request failed (${kind}).`,
          };
        }
        await sleep(retryDelayMs(policy, attempt + 1), this.run.signal, this.run.ports.clock);
      } finally {
        guard.dispose();
      }
    }
  }

  /** What the agent said since the outcome was defined or last graded: the attempt to judge. */
  private attempt(outcome: OutcomeState): string {
    const said: string[] = [];
    for (const fact of this.run.facts) {
      if (fact.seq <= outcome.attemptSince || fact.kind !== "agent_message") continue;
      for (const block of fact.content) {
        if (block.type === "text" && typeof block.text === "string" && block.text.trim() !== "")
          said.push(block.text);
      }
    }
    const text = said.join("\n\n");
    if (text === "") return "(The agent said nothing in this attempt.)";
    return text.length > ATTEMPT_CHARS ? text.slice(text.length - ATTEMPT_CHARS) : text;
  }

  /**
   * Commits `span.outcome_evaluation_ongoing` while the grader works, one at a time; the verdict
   * waits for the one in flight (`settled`), so the two never race for a version.
   */
  private heartbeat(outcomeId: string, iteration: number) {
    let chain: Promise<"ok" | "lost"> = Promise.resolve("ok");
    const every = this.run.ports.outcomeHeartbeatMs ?? DEFAULT_OUTCOME_HEARTBEAT_MS;
    const timer = setInterval(() => {
      chain = chain.then((status) =>
        status === "lost"
          ? status
          : this.run.commitLanding([
              {
                id: newId("sevt", this.run.ports.clock.now()),
                kind: "outcome_evaluation_ongoing",
                outcomeId,
                iteration,
              },
            ]),
      );
    }, every);
    return {
      stop: () => clearInterval(timer),
      settled: () => chain,
    };
  }
}

function add(total: ModelUsage, usage: ModelUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheCreationInputTokens += usage.cacheCreationInputTokens;
  total.cacheReadInputTokens += usage.cacheReadInputTokens;
}

/**
 * A run stopped for crashing its workers while grading: the open evaluation (if one was started)
 * ends as `failed` in the same commit, so its start never dangles.
 */
export function abandonedEvaluation(outcome: OutcomeState, now: number): TypedFact[] {
  if (!outcome.openStart) return [];
  return [
    {
      id: newId("sevt", now),
      kind: "outcome_evaluation_end",
      outcomeId: outcome.outcomeId,
      startId: outcome.openStart.id,
      iteration: outcome.openStart.iteration,
      result: "failed",
      explanation: "The grader's evaluation was interrupted by repeated worker crashes; it was stopped.",
      model: null,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    },
  ];
}

/**
 * `AWAKEN_OUTCOME_HEARTBEAT_MS`: how often a grader still at work commits its heartbeat (a whole
 * number of milliseconds, at least 100); unset or malformed, the default.
 */
export function outcomeHeartbeatFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const value = Number(env.AWAKEN_OUTCOME_HEARTBEAT_MS);
  return Number.isInteger(value) && value >= 100 ? value : DEFAULT_OUTCOME_HEARTBEAT_MS;
}
