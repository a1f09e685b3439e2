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

import {
  type ToolCall as AcpToolCall,
  methods,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AcpRuntimeCatalog, AcpRuntimeDefinition } from "../../brains/ports.js";
import { decodeCommitted, toolAwaitsFact } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact, PermissionVerdict, TypedFact } from "../../coordinator/factVocabulary.js";
import { newId } from "../../kernel/ids.js";
import { scrub } from "../../kernel/secretScrub.js";
import { ProviderError } from "../../providers/ports.js";
import { idle, type ModelSpan, responseFacts, sessionError, spanEnd, spanStart } from "../modelFacts.js";
import { ModelPreviews } from "../modelPreviews.js";
import type { TurnOutcome } from "../ports.js";
import { commitRequestFailure } from "../requestFailure.js";
import type { RunContext } from "../runContext.js";
import type { SandboxProvisioning } from "../sandboxProvisioning.js";
import type { CatalogEntry } from "../toolCatalog.js";
import { HarnessClientServices } from "./harnessClientServices.js";
import {
  decisionOf,
  harnessCall,
  harnessResult,
  harnessStage,
  openHarnessCalls,
  toolResultOf,
  transcriptOf,
  unheardDecisions,
  unseenInput,
  unseenResults,
} from "./harnessFacts.js";
import { gateHarnessCall, harnessToolInput, harnessToolName } from "./harnessGate.js";
import { HarnessHost, type LiveHarness, type PendingToolCall } from "./harnessHost.js";
import {
  HarnessLaunch,
  HarnessLaunchFailure,
  HarnessLaunchLost,
  type ServicesFactory,
} from "./harnessLaunch.js";
import { failed, HarnessToolServer, TOOL_SERVER_NAME } from "./harnessToolServer.js";
import { promptUsage } from "./harnessUsage.js";

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

/** How one following of the harness ended. */
type Followed =
  | { kind: "stopped"; response: PromptResponse }
  | { kind: "ask"; callId: string }
  /** The harness called one of the agent's own tools: committed, it is the run's to carry out. */
  | { kind: "tool"; callId: string }
  | { kind: "exited"; code: number | null }
  /** The harness answered its prompt with an error (it is still running). */
  | { kind: "refused"; reason: string }
  | { kind: "lost" };

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

/**
 * Follows one harness prompt: previews what streams, commits the harness's calls and results as
 * they happen (in order, one commit at a time), and answers its permission requests through the gate.
 */
class HarnessFollower {
  private readonly previews: ModelPreviews;
  private text = "";
  /** Harness tool call id → what it said of the call so far. */
  private readonly seen = new Map<string, AcpToolCall | ToolCallUpdate>();
  private queue: Promise<"ok" | "lost"> = Promise.resolve("ok");
  private asked: ((callId: string) => void) | null = null;
  private tooled: ((callId: string) => void) | null = null;

  constructor(
    private readonly run: RunContext,
    private readonly live: LiveHarness,
    private readonly span: ModelSpan,
    private readonly catalog: ReadonlyMap<string, CatalogEntry>,
  ) {
    this.previews = new ModelPreviews(
      (evidence) => run.ports.publish(run.activation.sessionId, evidence),
      () => newId("sevt", run.ports.clock.now()),
    );
  }

  async follow(
    answer: { pending: NonNullable<LiveHarness["permission"]>; allowed: boolean | null } | null,
    tool: { pending: PendingToolCall; result: CallToolResult | null } | null,
  ): Promise<Followed> {
    const connection = this.live.connection;
    const asked = new Promise<Followed>((resolve) => {
      this.asked = (callId) => resolve({ kind: "ask", callId });
    });
    const tooled = new Promise<Followed>((resolve) => {
      this.tooled = (callId) => resolve({ kind: "tool", callId });
    });
    connection.listener = {
      update: (n) => this.update(n),
      permission: (request) => this.permission(request),
    };
    const tools = this.live.tools;
    const handler = (name: string, input: Record<string, unknown>) => this.toolCall(name, input);
    if (tools) tools.handler = handler;
    if (tool)
      tool.pending.answer(
        tool.result ??
          failed("This call has no committed result: it did not run. Call it again if it is still needed."),
      );
    if (answer) {
      // A denial's result was committed with the confirmation: the harness's own report of the
      // refused call must not become a second one.
      if (answer.allowed === false)
        for (const [toolCallId, callId] of this.live.calls)
          if (callId === answer.pending.callId) this.live.calls.delete(toolCallId);
      answer.pending.answer(optionFor(answer.pending.request, answer.allowed));
    }
    const prompt = this.live.prompt;
    const lost = new Promise<Followed>((resolve) => {
      if (this.run.signal.aborted) resolve({ kind: "lost" });
      this.run.signal.addEventListener("abort", () => resolve({ kind: "lost" }), { once: true });
    });
    const exited = connection.process.exited.then((code): Followed => ({ kind: "exited", code }));
    const stopped = (prompt ?? new Promise<never>(() => undefined)).then(
      (response): Followed => ({ kind: "stopped", response }),
      async (error: unknown): Promise<Followed> => {
        // A prompt cut by a closed connection is the process going: give its exit a moment to show.
        const code = await Promise.race([connection.process.exited, delay(1_000).then(() => undefined)]);
        return code !== undefined || connection.exited
          ? { kind: "exited", code: code ?? null }
          : { kind: "refused", reason: refusalText(error) };
      },
    );
    const first = await Promise.race([stopped, asked, tooled, exited, lost]);
    if (tools && tools.handler === handler) tools.handler = null;
    // Commits queued by updates that came before the end land before the end's own.
    if ((await this.queue) === "lost") return { kind: "lost" };
    if (first.kind !== "ask") connection.listener = null;
    return first;
  }

  /**
   * A call of the agent's own tools, made through the tool server: committed as the native loop
   * commits a model's call of it (a custom tool is the client's to answer; an MCP toolset's call
   * carries the gate's verdict, a denial its result), then the run carries it out and the harness
   * gets the committed result.
   */
  private async toolCall(name: string, input: Record<string, unknown>): Promise<CallToolResult> {
    const now = this.run.ports.clock.now();
    const id = newId("sevt", now);
    const plan = responseFacts(
      { content: [{ type: "tool_use", id, name, input }], stopReason: "tool_use", usage: NO_USAGE },
      newId("sevt", now),
      now,
      this.catalog,
      new Map([[0, id]]),
    );
    this.enqueue(() => [...this.flushText(now), ...plan.facts]);
    if ((await this.queue) === "lost") return failed("The run carrying this call stopped; it did not run.");
    return new Promise<CallToolResult>((resolve) => {
      this.live.toolCall = { callId: id, answer: resolve };
      this.tooled?.(id);
    });
  }

  /** Whether a harness call is its own report of a call to the tool server (`mcp__awaken__<tool>`). */
  private ours(call: AcpToolCall | ToolCallUpdate): boolean {
    if (this.live.folded.has(call.toolCallId)) return true;
    const tools = this.live.tools?.tools ?? [];
    const meta = (call._meta as { claudeCode?: { toolName?: unknown } } | null | undefined)?.claudeCode;
    const names = [call.title, typeof meta?.toolName === "string" ? meta.toolName : undefined];
    const found = names.some((name) =>
      tools.some((tool) => name === `mcp__${TOOL_SERVER_NAME}__${tool.name}`),
    );
    if (found) this.live.folded.add(call.toolCallId);
    return found;
  }

  private update(notification: SessionNotification): void {
    if (notification.sessionId !== this.live.acpSessionId) return;
    const update = notification.update;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        if (update.content.type === "text") {
          this.text += update.content.text;
          this.previews.add({ type: "text_delta", index: 0, text: update.content.text });
        }
        return;
      case "agent_thought_chunk":
        if (update.content.type === "text")
          this.previews.add({ type: "thinking_delta", index: 0, text: update.content.text });
        return;
      case "plan":
        this.previews.add({
          type: "thinking_delta",
          index: 0,
          text: `Plan: ${update.entries.map((e) => `[${e.status}] ${e.content}`).join("; ")}\n`,
        });
        return;
      case "tool_call":
        // A call of the agent's own tools is committed once, when the tool server receives it.
        if (this.ours(update)) return;
        this.seen.set(update.toolCallId, { ...update });
        if (update.status === "in_progress" || update.status === "completed" || update.status === "failed")
          this.enqueue(() => this.callFacts(update.toolCallId, null));
        if (update.status === "completed" || update.status === "failed")
          this.enqueue(() => this.resultFacts(update.toolCallId, update.status === "failed", update));
        return;
      case "tool_call_update": {
        if (this.live.folded.has(update.toolCallId)) return;
        const before = this.seen.get(update.toolCallId);
        this.seen.set(update.toolCallId, { ...before, ...update } as ToolCallUpdate);
        if (update.status === "in_progress" || update.status === "completed" || update.status === "failed")
          this.enqueue(() => this.callFacts(update.toolCallId, null));
        if (update.status === "completed" || update.status === "failed")
          this.enqueue(() => this.resultFacts(update.toolCallId, update.status === "failed", update));
        return;
      }
      default:
        return;
    }
  }

  private async permission(request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const id = request.toolCall.toolCallId;
    // The agent's own tools pass the gate when the tool server receives the call, not here.
    if (this.ours(request.toolCall)) return optionFor(request, true);
    const merged = { ...this.seen.get(id), ...request.toolCall } as ToolCallUpdate;
    this.seen.set(id, merged);
    const name = harnessToolName(merged.kind);
    const input = harnessToolInput(merged);
    const decision = gateHarnessCall(this.run.activation.agent.definition, name, input);
    const verdict = { decision: decision.permission, evaluation: decision.evaluation };
    if (decision.permission === "ask") {
      this.enqueue(() => this.callFacts(id, verdict));
      const callId = (await this.queue) === "ok" ? this.live.calls.get(id) : undefined;
      if (callId === undefined) return { outcome: { outcome: "cancelled" } };
      // The run parks; the harness waits here for the run that brings the decision.
      return new Promise<RequestPermissionResponse>((resolve) => {
        this.live.permission = { callId, request, answer: resolve };
        this.asked?.(callId);
      });
    }
    this.enqueue(() => this.callFacts(id, verdict));
    if ((await this.queue) === "lost") return { outcome: { outcome: "cancelled" } };
    return optionFor(request, decision.permission === "allow");
  }

  /** The call's fact, once (with the gate's verdict when it asked), after the text that preceded it. */
  private callFacts(toolCallId: string, verdict: PermissionVerdict | null): TypedFact[] {
    if (this.live.calls.has(toolCallId)) return [];
    const call = this.seen.get(toolCallId);
    if (!call) return [];
    const now = this.run.ports.clock.now();
    const fact = harnessCall(
      now,
      harnessToolName(call.kind),
      harnessToolInput(call),
      verdict ?? {
        decision: "allow",
        evaluation: { type: "harness", reason: "the harness ran it without asking" },
      },
    );
    this.live.calls.set(toolCallId, fact.id);
    return [...this.flushText(now), fact];
  }

  private resultFacts(
    toolCallId: string,
    failed: boolean,
    update: AcpToolCall | ToolCallUpdate,
  ): TypedFact[] {
    const callId = this.live.calls.get(toolCallId);
    if (!callId) return [];
    this.live.calls.delete(toolCallId);
    return [harnessResult(this.run.ports.clock.now(), callId, contentText(update), failed)];
  }

  /** The text streamed so far becomes an agent message before what follows it. */
  private flushText(now: number): TypedFact[] {
    if (this.text === "") return [];
    const message: TypedFact = {
      id: this.previews.messageId,
      kind: "agent_message",
      content: [{ type: "text", text: this.text }],
    };
    this.text = "";
    this.previews.settle([message]);
    void now;
    return [message];
  }

  private enqueue(facts: () => TypedFact[]): void {
    this.queue = this.queue.then(async (status) => {
      if (status === "lost") return "lost";
      const batch = facts();
      if (batch.length === 0) return "ok";
      return this.run.commitLanding(batch);
    });
  }

  /** Commits the park: what streamed so far, the asked call's ticket, the span's end and the idle. */
  async park(callId: string): Promise<TurnOutcome> {
    const now = this.run.ports.clock.now();
    const body = [
      ...this.flushText(now),
      toolAwaitsFact(newId("sevt", now), callId, "confirmation", "server", false, true),
      spanEnd(this.span, now, null, false),
    ];
    this.previews.settle(body);
    const status = await this.run.commitLanding(
      [...body, idle(now, { kind: "waiting", callIds: [callId] })],
      "awaiting",
    );
    // The harness stays, parked on its question, for the run that brings the answer.
    this.live.connection.listener = null;
    return status === "ok" ? "settled" : "lost_claim";
  }

  /**
   * Commits what streamed before a call of the agent's tools and ends the span: the run goes on
   * with the call as with a model's (runs it, or parks for the client), then resumes the harness.
   */
  async handOver(): Promise<"continue" | TurnOutcome> {
    const now = this.run.ports.clock.now();
    const body = [...this.flushText(now), spanEnd(this.span, now, null, false)];
    this.previews.settle(body);
    const status = await this.run.commitLanding(body);
    return status === "ok" ? "continue" : "lost_claim";
  }

  /** Commits the prompt's end like a model's answer, through the fence. */
  async land(response: PromptResponse): Promise<TurnOutcome | "continue"> {
    const now = this.run.ports.clock.now();
    const body: TypedFact[] = [...this.previews.thinkingFacts(), ...this.flushText(now)];
    // A call the harness never finished is closed now: its prompt is over.
    for (const callId of this.live.calls.values())
      body.push(
        harnessResult(
          now,
          callId,
          `the harness ended its turn (${response.stopReason}) without a result for this call`,
          true,
        ),
      );
    this.live.calls.clear();
    // The prompt's tokens, where the harness reports them: they count like a model request's.
    body.push(spanEnd(this.span, now, promptUsage(response), false));
    this.previews.settle(body);
    const reason =
      response.stopReason === "refusal" ? ({ kind: "refusal" } as const) : ({ kind: "turn_ended" } as const);
    const committed = await this.run.commit([...body, idle(now, reason)], "done");
    if (committed === "ok") return "settled";
    if (committed === "lost") return "lost_claim";
    const rebased = await this.run.commitLanding(body);
    return rebased === "lost" ? "lost_claim" : "continue";
  }
}

/** The option the harness offered for the decision (allow once / reject once first), or cancelled. */
function optionFor(request: RequestPermissionRequest, allowed: boolean | null): RequestPermissionResponse {
  if (allowed === null) return { outcome: { outcome: "cancelled" } };
  const kinds = allowed ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  for (const kind of kinds) {
    const option = request.options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

function contentText(update: AcpToolCall | ToolCallUpdate): string {
  const parts: string[] = [];
  for (const item of update.content ?? []) {
    if (item.type === "content" && item.content.type === "text") parts.push(item.content.text);
    else if (item.type === "diff") parts.push(`diff of ${item.path}`);
    else if (item.type === "terminal") parts.push(`terminal ${item.terminalId}`);
  }
  if (parts.length === 0 && update.rawOutput !== undefined && update.rawOutput !== null)
    parts.push(typeof update.rawOutput === "string" ? update.rawOutput : JSON.stringify(update.rawOutput));
  return parts.join("\n").slice(0, 100_000);
}

/** The harness's own words for a failed prompt (a JSON-RPC error's message and details), bounded. */
function refusalText(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 2_000);
  const data = (error as { data?: unknown }).data;
  const details =
    data !== null && typeof data === "object" && typeof (data as { details?: unknown }).details === "string"
      ? `: ${(data as { details: string }).details}`
      : "";
  return `${error.message}${details}`.slice(0, 2_000);
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

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
  await Promise.race([prompt.catch(() => undefined), delay(CANCEL_GRACE_MS)]);
  if (live.prompt === prompt) live.prompt = null;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** A worker's ACP ports: its runtimes, a host for its harnesses, and the sandbox-confined services. */
export function acpRuntimePorts(runtimes: AcpRuntimeCatalog): AcpRuntimePorts {
  return {
    runtimes,
    harnesses: new HarnessHost(),
    services: (sandbox, signal) => new HarnessClientServices(sandbox, { signal }),
  };
}
