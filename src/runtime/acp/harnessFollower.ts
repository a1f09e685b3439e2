/**
 * Following one harness prompt for a run: what streams becomes live previews, the harness's own
 * calls and results are committed as they happen, its permission requests pass the gate, and its
 * calls of the agent's own tools (through the tool server) are committed as a model's would be.
 * How the following ended is the Brain step's to act on (acpBrainStep.ts).
 */

import type {
  ToolCall as AcpToolCall,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toolAwaitsFact } from "../../coordinator/factCodec.js";
import type { PermissionVerdict, TypedFact } from "../../coordinator/factVocabulary.js";
import { newId } from "../../kernel/ids.js";
import { idle, type ModelSpan, responseFacts, spanEnd } from "../modelFacts.js";
import { ModelPreviews } from "../modelPreviews.js";
import type { TurnOutcome } from "../ports.js";
import type { RunContext } from "../runContext.js";
import type { CatalogEntry } from "../toolCatalog.js";
import { harnessCall, harnessResult } from "./harnessFacts.js";
import { gateHarnessCall, harnessToolInput, harnessToolName } from "./harnessGate.js";
import type { LiveHarness, PendingToolCall } from "./harnessHost.js";
import { failed, TOOL_SERVER_NAME } from "./harnessToolServer.js";
import { promptUsage } from "./harnessUsage.js";

/** How one following of the harness ended. */
export type Followed =
  | { kind: "stopped"; response: PromptResponse }
  | { kind: "ask"; callId: string }
  /** The harness called one of the agent's own tools: committed, it is the run's to carry out. */
  | { kind: "tool"; callId: string }
  | { kind: "exited"; code: number | null }
  /** The harness answered its prompt with an error (it is still running). */
  | { kind: "refused"; reason: string }
  | { kind: "lost" };

/**
 * Follows one harness prompt: previews what streams, commits the harness's calls and results as
 * they happen (in order, one commit at a time), and answers its permission requests through the gate.
 */
export class HarnessFollower {
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
    // The next call of the agent's tools (one made meanwhile first) is this run's to commit.
    const withdraw = this.live.tools?.listen((name, input) => this.toolCall(name, input));
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
    withdraw?.();
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

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
