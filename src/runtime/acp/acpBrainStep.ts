/**
 * The ACP Brain step: a turn of an agent whose model is `acp:<runtime>`, answered by that harness
 * inside the session's sandbox. Only the Brain changes: the claim fence, the commit path and the
 * permission gate are the native loop's. The harness's text and thoughts stream as live previews
 * and are committed as the turn's agent messages; its own tool calls and results are committed as
 * they happen, each through the gate when the harness asks; an `ask` parks the run with the ticket
 * committed first, and the harness waits in this worker's host for the run that brings the answer.
 * The agent's own tools reach the harness through its tool server: a call is committed as a
 * model's call of that tool, the run carries it out, and the waiting harness gets the result.
 */

import { methods } from "@agentclientprotocol/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AcpRuntimeCatalog, AcpRuntimeDefinition } from "../../brains/ports.js";
import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact, TypedFact } from "../../coordinator/factVocabulary.js";
import { newId } from "../../kernel/ids.js";
import { scrub } from "../../kernel/secretScrub.js";
import { ProviderError } from "../../providers/ports.js";
import { idle, type ModelSpan, sessionError, spanStart } from "../modelFacts.js";
import type { TurnOutcome } from "../ports.js";
import { commitRequestFailure } from "../requestFailure.js";
import type { RunContext } from "../runContext.js";
import type { SandboxProvisioning } from "../sandboxProvisioning.js";
import type { CatalogEntry } from "../toolCatalog.js";
import { HarnessClientServices } from "./harnessClientServices.js";
import {
  decisionOf,
  harnessResult,
  harnessStage,
  openHarnessCalls,
  toolResultOf,
  transcriptOf,
  unheardDecisions,
  unseenInput,
  unseenResults,
} from "./harnessFacts.js";
import { delay, HarnessFollower } from "./harnessFollower.js";
import { HarnessHost, type LiveHarness, type PendingToolCall } from "./harnessHost.js";
import {
  HarnessLaunch,
  HarnessLaunchFailure,
  HarnessLaunchLost,
  type ServicesFactory,
} from "./harnessLaunch.js";
import { failed, HarnessToolServer } from "./harnessToolServer.js";

export const ACP_PROVIDER = "acp";
const LAUNCH_FAILED = "acp_harness_launch_failed_error";
const HARNESS_FAILED = "acp_harness_failed_error";
const UNKNOWN_RUNTIME = "acp_runtime_unknown_error";
/** How long an interrupted harness gets to answer its open prompt `cancelled`. */
const CANCEL_GRACE_MS = 5_000;
const NOT_RUN =
  "The harness that asked for this call stopped before it could run it, so it did not run. Ask for it again if it is still needed.";

/** What the runtime needs to run ACP Brains: the runtimes this worker knows and its live harnesses. */
export interface AcpRuntimePorts {
  runtimes: AcpRuntimeCatalog;
  harnesses: HarnessHost;
  services: ServicesFactory;
}

export class AcpBrainStep {
  private readonly key: string;

  constructor(
    private readonly run: RunContext,
    private readonly provisioning: SandboxProvisioning,
    private readonly acp: AcpRuntimePorts | undefined,
    private readonly runtimeName: string,
    /** The run's tools: the agent's custom and MCP toolset tools among them are offered to the harness. */
    private readonly catalog: ReadonlyMap<string, CatalogEntry>,
  ) {
    this.key = `${run.activation.sessionId}/${run.activation.threadId}`;
  }

  async turn(failedAttempts: number): Promise<TurnOutcome | "continue"> {
    const runtime = this.acp?.runtimes.get(this.runtimeName) ?? null;
    if (!this.acp || !runtime) return this.fail(UNKNOWN_RUNTIME, this.unknownRuntime());
    const host = this.acp.harnesses;
    let live = host.get(this.key);
    // A prompt an interrupt ended (the interrupted run may not have cancelled it yet: it lost its
    // claim or was parked, and this run may have started first) is never followed as this run's
    // answer: it is cancelled, with what it waits on (a decision, a tool's result).
    const stale = live;
    if (stale?.prompt && this.run.facts.some((f) => f.kind === "interrupt" && f.seq > stale.promptSeq))
      await cancelPrompt(stale);
    if (live?.permission) {
      // The run that brings the decision: tell the harness, then follow it from where it stopped.
      const pending = live.permission;
      live.permission = null;
      const decided = decisionOf(this.run.facts, pending.callId);
      live.connection.listener = null;
      this.pendingAnswer = { pending, allowed: decided };
    } else if (live?.toolCall) {
      // The run that carried out a call of the agent's tools: the harness gets its committed result.
      const pending = live.toolCall;
      live.toolCall = null;
      live.connection.listener = null;
      this.pendingTool = { pending, result: toolResultOf(this.run.facts, pending.callId) };
    } else if (!live) {
      // The harness that asked is gone: what was allowed for it never ran.
      const notRun = openHarnessCalls(this.run.facts).map((id) =>
        harnessResult(this.run.ports.clock.now(), id, NOT_RUN, true),
      );
      if (notRun.length > 0 && (await this.run.commitLanding(notRun)) === "lost") return "lost_claim";
      try {
        live = await new HarnessLaunch(this.run, this.provisioning, host, this.acp.services).launch(
          this.key,
          runtime,
          HarnessToolServer.offered(this.catalog),
        );
      } catch (error) {
        if (error instanceof HarnessLaunchLost || this.run.signal.aborted) return "lost_claim";
        if (error instanceof HarnessLaunchFailure) return this.fail(LAUNCH_FAILED, error.message, runtime);
        throw error;
      }
      this.primed = lastReadyLoaded(this.run.facts);
    }
    return this.follow(live, runtime, failedAttempts);
  }

  /** A decision the resumed harness is told once this run follows it. */
  private pendingAnswer: { pending: NonNullable<LiveHarness["permission"]>; allowed: boolean | null } | null =
    null;
  /** A call of the agent's tools the resumed harness is answered once this run follows it. */
  private pendingTool: { pending: PendingToolCall; result: CallToolResult | null } | null = null;
  /** Whether the harness holds the thread's history itself (a live or reloaded session). */
  private primed = true;

  private async follow(
    live: LiveHarness,
    runtime: AcpRuntimeDefinition,
    failedAttempts: number,
  ): Promise<TurnOutcome | "continue"> {
    const run = this.run;
    const now = run.ports.clock.now();
    if (!live.prompt && !this.pendingAnswer && !this.pendingTool) {
      const texts = unseenInput(run.facts);
      // What a harness gone since could not be handed: results of the agent's tools (over its MCP
      // call), decisions on the calls it asked about.
      const results = [...unseenResults(run.facts), ...unheardDecisions(run.facts)];
      if (texts.length === 0 && results.length === 0) {
        const done = await run.commit([idle(now, { kind: "turn_ended" })], "done");
        return done === "ok" ? "settled" : done === "lost" ? "lost_claim" : "continue";
      }
      // A harness that already took this input (its prompt was cut off: a crash, an exit) and holds
      // its own session is told to go on, never handed the input again: what it ran stays run once.
      const resumed = promptedSince(run.facts, lastInputSeq(run.facts));
      const text =
        resumed && this.primed
          ? [RESUME_NOTE, ...results].join("\n\n")
          : this.primed
            ? [...texts, ...results].join("\n\n")
            : `${primer(transcriptOf(run.facts.filter((f) => f.seq < lastInputSeq(run.facts))))}${resumed ? `${RESUME_NOTE}\n\n` : ""}${[...texts, ...results].join("\n\n")}`;
      this.primed = true;
      live.promptSeq = run.facts.at(-1)?.seq ?? 0;
      live.connection.forgetHeld();
      live.prompt = live.connection.agent.request(methods.agent.session.prompt, {
        sessionId: live.acpSessionId,
        prompt: [{ type: "text", text }],
      });
      // A rejected prompt is read by the follower; never an unhandled rejection.
      live.prompt.catch(() => undefined);
    }
    const span: ModelSpan = { startId: newId("sevt", now), provider: ACP_PROVIDER, model: run.model() };
    const started = await run.commit([spanStart(span)]);
    if (started === "lost") return this.lose();
    if (started === "conflict") return "continue";
    const follower = new HarnessFollower(run, live, span, this.catalog);
    const followed = await follower.follow(this.pendingAnswer, this.pendingTool);
    this.pendingAnswer = null;
    this.pendingTool = null;
    switch (followed.kind) {
      case "lost":
        return this.lose();
      case "ask":
        return follower.park(followed.callId);
      case "tool":
        return follower.handOver();
      case "exited": {
        live.connection.listener = null;
        await this.acp?.harnesses.stop(this.key);
        const tail = scrub(live.connection.process.stderrTail(), []).trim().slice(-1_000);
        return commitRequestFailure(
          run,
          span,
          failedAttempts,
          new ProviderError(
            "request_failed",
            `the ${runtime.name} harness exited (code ${followed.code ?? "signal"}) during the turn` +
              (tail === "" ? "" : `: ${tail}`),
            { transient: true },
          ),
          HARNESS_FAILED,
          undefined,
        );
      }
      case "stopped":
        live.prompt = null;
        return follower.land(followed.response);
      case "refused":
        live.prompt = null;
        return commitRequestFailure(
          run,
          span,
          failedAttempts,
          new Error(`the ${runtime.name} harness failed its turn: ${followed.reason}`),
          HARNESS_FAILED,
        );
    }
  }

  /** The claim is gone: the harness dies with it (an interrupt first lets it end its prompt). */
  private async lose(): Promise<TurnOutcome> {
    const live = this.acp?.harnesses.get(this.key);
    if (live) {
      live.connection.listener = null;
      const prompt = live.prompt;
      if (prompt && (await this.interrupted())) {
        // The next run may have taken the harness meanwhile (and cancelled this prompt itself).
        if (live.prompt === prompt) await cancelPrompt(live);
      } else {
        await this.acp?.harnesses.stop(this.key);
      }
    }
    return "lost_claim";
  }

  /** Whether an interrupt was committed after what this run has seen. */
  private async interrupted(): Promise<boolean> {
    try {
      const known = this.run.facts.at(-1)?.seq ?? 0;
      const later = (await this.run.ports.readThread(this.run.activation.threadId, known)).map(
        decodeCommitted,
      );
      return later.some((fact) => fact.kind === "interrupt");
    } catch {
      return false;
    }
  }

  private unknownRuntime(): string {
    const known = this.acp?.runtimes.list().map((r) => r.name) ?? [];
    return `this worker has no ACP runtime named ${this.runtimeName}${known.length > 0 ? ` (it knows ${known.join(", ")})` : ""}; register it with --acp-runtimes on every worker`;
  }

  /** A failure no retry can fix: the stage (when launching), the error, the turn ended. */
  private async fail(type: string, message: string, runtime?: AcpRuntimeDefinition): Promise<TurnOutcome> {
    const now = this.run.ports.clock.now();
    const facts: TypedFact[] = [];
    if (runtime) {
      facts.push(harnessStage(now, runtime.name, "failed", { error: message }));
    }
    facts.push(sessionError(now, type, message, "exhausted"), idle(now, { kind: "retries_exhausted" }));
    const status = await this.run.commitLanding(facts, "failed");
    return status === "ok" ? "settled" : "lost_claim";
  }
}

const RESUME_NOTE =
  "(Your previous attempt at this turn was cut off: you were restarted. Calls you had finished are in " +
  "your history; calls left unfinished were not repeated and whether they took effect is unknown. Go on " +
  "from where you stopped, and do not repeat calls that already ran.)";

/** Whether a harness prompt was already started for the input committed at `inputSeq`. */
function promptedSince(facts: readonly CommittedTypedFact[], inputSeq: number): boolean {
  return facts.some((f) => f.kind === "model_request_start" && f.seq > inputSeq);
}

function primer(transcript: string): string {
  if (transcript === "") return "";
  return `(This conversation was restarted. What was said before, for context:)\n${transcript}\n\n(The new message:)\n`;
}

function lastInputSeq(facts: readonly { seq: number; kind: string }[]): number {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind === "user_message") return fact.seq;
  }
  return Number.MAX_SAFE_INTEGER;
}

/** Whether the last `ready` stage reloaded the harness's own session (it then holds the history). */
function lastReadyLoaded(facts: readonly CommittedTypedFact[]): boolean {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind === "internal" && fact.type === "awaken.harness_stage" && fact.body.stage === "ready")
      return fact.body.loaded === true || !facts.some((f) => f.kind === "agent_message" && f.seq < fact.seq);
  }
  return true;
}

/** Cancels the harness's prompt and waits (a while) for it to end; the harness stays for the next. */
async function cancelPrompt(live: LiveHarness): Promise<void> {
  const prompt = live.prompt;
  if (!prompt) return;
  await live.connection.agent
    .notify(methods.agent.session.cancel, { sessionId: live.acpSessionId })
    .catch(() => undefined);
  live.permission?.answer({ outcome: { outcome: "cancelled" } });
  live.permission = null;
  live.toolCall?.answer(failed("The turn was interrupted before this call had a result."));
  live.toolCall = null;
  live.tools?.cancelWaiting("The turn was interrupted before this call was made.");
  await Promise.race([prompt.catch(() => undefined), delay(CANCEL_GRACE_MS)]);
  if (live.prompt === prompt) {
    live.prompt = null;
    live.connection.forgetHeld();
  }
}

/** A worker's ACP ports: its runtimes, a host for its harnesses, and the sandbox-confined services. */
export function acpRuntimePorts(runtimes: AcpRuntimeCatalog): AcpRuntimePorts {
  return {
    runtimes,
    harnesses: new HarnessHost(),
    services: (sandbox, signal) => new HarnessClientServices(sandbox, { signal }),
  };
}
