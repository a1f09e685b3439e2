/**
 * The scenario through AG-UI and its official client, `@ag-ui/client`'s HttpAgent: a run per
 * request, client tools answered by a tool message in the next run, approvals as interrupts
 * resumed by id, `abortRun()` as stop (by the protocol's design a dropped run interrupts its turn),
 * and a reconnect as a fresh client's run on the same thread, rebuilt from MESSAGES_SNAPSHOT.
 */
import { randomUUID } from "node:crypto";
import type { HttpAgent } from "@ag-ui/client";
import { type BaseEvent, EventType, type Message, type RunFinishedEvent } from "@ag-ui/core";
import { agUiAgent, type RecordedRun, recordRun, say } from "../support/agUiAgent.js";
import type { TestServer } from "../support/testServer.js";
import { WEATHER_FOR_AG_UI } from "./conformanceServer.js";
import type { HistoryTurn, ProtocolDriver, ToolCallState, TurnView } from "./protocolDriver.js";

type Outcome =
  | { type: "success"; pendingToolCallIds?: string[] }
  | { type: "interrupt"; interrupts: Array<{ id: string; toolCallId?: string }> }
  | { type: "cancelled" };

/** How one run ended for the client: what RUN_FINISHED / RUN_ERROR said, or that it was aborted. */
interface RunSeen {
  types: string[];
  finished: RunFinishedEvent | undefined;
  runError: { message: string } | undefined;
}

export class AgUiDriver implements ProtocolDriver {
  readonly name = "AG-UI";
  readonly disconnectInterrupts = true;
  private agent: HttpAgent;
  private last: RunSeen | null = null;
  /** Calls this user denied: the protocol shows a denial only as the result the model was given. */
  private readonly denied = new Set<string>();

  constructor(
    private readonly t: TestServer,
    private readonly agentId: string,
    readonly threadId: string,
  ) {
    this.agent = agUiAgent(t, agentId, threadId);
  }

  async say(text: string): Promise<TurnView> {
    say(this.agent, text);
    return this.run();
  }

  async answerClientTool(callId: string, output: string): Promise<TurnView> {
    this.agent.addMessage({ id: `tool-${randomUUID()}`, role: "tool", toolCallId: callId, content: output });
    return this.run();
  }

  async decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView> {
    if (!this.interruptFor(callId)) {
      // Interrupts this client holds were answered elsewhere: the official client refuses every run
      // that does not resume them, and the server refuses resuming them, so it is opened afresh
      // (a page reload). Then a run with nothing new tells it about the call another client asked.
      if (this.agent.pendingInterrupts.length > 0)
        this.agent = agUiAgent(this.t, this.agentId, this.threadId);
      await this.run();
    }
    const interrupt = this.interruptFor(callId);
    if (!interrupt) throw new Error(`no pending interrupt names call ${callId}`);
    if (!allowed) this.denied.add(callId);
    return this.run({
      resume: [
        {
          interruptId: interrupt.id,
          status: "resolved",
          payload: { approved: allowed, ...(reason !== undefined ? { reason } : {}) },
        },
      ],
    });
  }

  async interruptDuringTurn(text: string): Promise<TurnView> {
    await this.abortOnceTextStreams(text);
    return this.view();
  }

  async disconnectMidTurn(text: string): Promise<void> {
    await this.abortOnceTextStreams(text);
  }

  /** A fresh client on the thread, as after a page reload: the server rebuilds it with a snapshot. */
  async reconnect(): Promise<TurnView> {
    this.agent = agUiAgent(this.t, this.agentId, this.threadId);
    const view = await this.run();
    if (!this.last?.types.includes(EventType.MESSAGES_SNAPSHOT)) {
      throw new Error(`the reconnect run had no MESSAGES_SNAPSHOT: ${this.last?.types.join(", ")}`);
    }
    return view;
  }

  /** A fresh client's run with nothing new: the thread as its MESSAGES_SNAPSHOT tells it. */
  async history(): Promise<HistoryTurn[]> {
    const reader = agUiAgent(this.t, this.agentId, this.threadId);
    const run = await recordRun(reader, { tools: [WEATHER_FOR_AG_UI] });
    if (!run.types.includes(EventType.MESSAGES_SNAPSHOT)) {
      throw new Error(`the history run had no MESSAGES_SNAPSHOT: ${run.types.join(", ")}`);
    }
    return agUiTurns(reader.messages);
  }

  async close(): Promise<void> {
    this.agent.abortRun();
  }

  /** The messages the client holds now (a cross-protocol check reads them). */
  messages(): Message[] {
    return this.agent.messages;
  }

  private async run(parameters: Parameters<typeof recordRun>[1] = {}): Promise<TurnView> {
    const run: RecordedRun = await recordRun(this.agent, { tools: [WEATHER_FOR_AG_UI], ...parameters });
    this.last = { types: run.types, finished: run.finished, runError: run.runError };
    return this.view();
  }

  private async abortOnceTextStreams(text: string): Promise<void> {
    say(this.agent, text);
    const events: BaseEvent[] = [];
    let sawText!: () => void;
    const textSeen = new Promise<void>((resolve) => {
      sawText = resolve;
    });
    let finished: RunFinishedEvent | undefined;
    const done = this.agent.runAgent(
      { tools: [WEATHER_FOR_AG_UI] },
      {
        onEvent: ({ event }) => {
          events.push(event);
        },
        onTextMessageContentEvent: () => sawText(),
        onRunFinishedEvent: ({ event }) => {
          finished = event;
        },
      },
    );
    await textSeen;
    this.agent.abortRun();
    await done;
    this.last = { types: events.map((e) => e.type), finished, runError: undefined };
  }

  private outcome(): Outcome | undefined {
    return this.last?.finished?.outcome as Outcome | undefined;
  }

  private interruptFor(callId: string) {
    return this.agent.pendingInterrupts.find((i) => i.toolCallId === callId);
  }

  private view(): TurnView {
    const turn = currentTurn(this.agent.messages);
    const outcome = this.outcome();
    const pending = new Set(outcome?.type === "success" ? (outcome.pendingToolCallIds ?? []) : []);
    const asked = new Set(this.agent.pendingInterrupts.flatMap((i) => (i.toolCallId ? [i.toolCallId] : [])));
    const answered = new Set(turn.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])));
    const toolCalls = turn.flatMap((m) =>
      m.role === "assistant"
        ? (m.toolCalls ?? []).map((call) => {
            let state: ToolCallState = "incomplete";
            if (answered.has(call.id)) state = this.denied.has(call.id) ? "denied" : "done";
            else if (pending.has(call.id)) state = "awaiting_result";
            else if (asked.has(call.id)) state = "awaiting_approval";
            return { id: call.id, name: call.function.name, state };
          })
        : [],
    );
    const text = assistantTexts(turn).at(-1) ?? "";
    if (this.last?.runError) return { end: "error", text, toolCalls, error: this.last.runError.message };
    if (!this.last?.finished || outcome?.type === "cancelled") return { end: "interrupted", text, toolCalls };
    if (outcome?.type === "interrupt" || pending.size > 0) return { end: "waiting", text, toolCalls };
    return { end: "natural", text, toolCalls };
  }
}

function currentTurn(messages: readonly Message[]): Message[] {
  const start = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(Math.max(0, start));
}

function assistantTexts(messages: readonly Message[]): string[] {
  return messages.flatMap((m) =>
    m.role === "assistant" && typeof m.content === "string" && m.content !== "" ? [m.content] : [],
  );
}

/** An AG-UI message list as turns: each user message opens one. */
export function agUiTurns(messages: readonly Message[]): HistoryTurn[] {
  const answered = new Set(messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])));
  const turns: HistoryTurn[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      turns.push({
        user: typeof message.content === "string" ? message.content : "",
        texts: [],
        toolCalls: [],
      });
      continue;
    }
    const turn = turns.at(-1);
    if (!turn || message.role !== "assistant") continue;
    turn.texts.push(...assistantTexts([message]));
    for (const call of message.toolCalls ?? []) {
      turn.toolCalls.push({ id: call.id, name: call.function.name, answered: answered.has(call.id) });
    }
  }
  return turns;
}
