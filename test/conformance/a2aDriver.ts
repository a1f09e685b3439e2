/**
 * The scenario through A2A and its official client, `@a2a-js/sdk`'s JSON-RPC or HTTP+JSON client: the session
 * is the context, each turn a task. A message streams its task to rest; a client tool's result
 * (text) and an approval (a data part `{approved}`) are follow-up messages in the same task;
 * interrupting is `CancelTask`; dropping the stream leaves the task running, and coming back is
 * `SubscribeToTask` (or `GetTask` once the task is terminal, as the protocol has it). The view is
 * the client's own read of the task once its stream ends.
 */
import type { Message, StreamResponse, Task } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { a2aClient, dataPart, partsText, userRequest } from "../support/a2aClient.js";
import type { TestServer } from "../support/testServer.js";
import type {
  HistoryTurn,
  ProtocolDriver,
  ToolCallState,
  ToolCallView,
  TurnEnd,
  TurnView,
} from "./protocolDriver.js";

// biome-ignore lint/suspicious/noExplicitAny: data parts are free-form JSON, read field by field.
type Data = Record<string, any>;

export class A2aDriver implements ProtocolDriver {
  readonly disconnectInterrupts = false;
  private dropped: string | null = null;

  private constructor(
    private readonly client: Client,
    readonly contextId: string,
    readonly name: string,
  ) {}

  static async open(
    t: TestServer,
    agentId: string,
    sessionId: string,
    binding: "JSONRPC" | "HTTP+JSON" = "JSONRPC",
  ): Promise<A2aDriver> {
    const name = binding === "JSONRPC" ? "A2A" : "A2A HTTP+JSON";
    return new A2aDriver(await a2aClient(t, agentId, binding), sessionId, name);
  }

  async say(text: string): Promise<TurnView> {
    return this.streamToRest(this.client.sendMessageStream(userRequest(text, { contextId: this.contextId })));
  }

  async answerClientTool(_callId: string, output: string): Promise<TurnView> {
    const task = await this.latestTask();
    return this.streamToRest(
      this.client.sendMessageStream(userRequest(output, { taskId: task.id, contextId: this.contextId })),
    );
  }

  async decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView> {
    const task = await this.latestTask();
    const answer = dataPart({
      approved: allowed,
      toolCallId: callId,
      ...(reason !== undefined ? { reason } : {}),
    });
    return this.streamToRest(
      this.client.sendMessageStream(userRequest([answer], { taskId: task.id, contextId: this.contextId })),
    );
  }

  async interruptDuringTurn(text: string): Promise<TurnView> {
    let taskId = "";
    let canceled = false;
    for await (const event of this.client.sendMessageStream(
      userRequest(text, { contextId: this.contextId }),
    )) {
      taskId = taskIdOf(event) ?? taskId;
      if (!canceled && event.payload?.$case === "artifactUpdate") {
        canceled = true;
        await this.client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
      }
    }
    return this.viewOf(await this.read(taskId));
  }

  async disconnectMidTurn(text: string): Promise<void> {
    const stream = this.client.sendMessageStream(userRequest(text, { contextId: this.contextId }));
    for await (const event of stream) {
      this.dropped = taskIdOf(event) ?? this.dropped;
      if (event.payload?.$case === "artifactUpdate") break;
    }
  }

  async reconnect(): Promise<TurnView> {
    const taskId = this.dropped;
    if (!taskId) throw new Error("nothing to reconnect to");
    try {
      for await (const _ of this.client.resubscribeTask({ tenant: "", id: taskId })) {
        // read to the end: the stream closes once the task is at rest
      }
    } catch (error) {
      // A task that finished meanwhile cannot be subscribed to; it is read instead.
      // Either binding's typed error (JSON-RPC's or REST's) extends the protocol's own.
      if (!(error instanceof UnsupportedOperationError)) throw error;
    }
    return this.viewOf(await this.read(taskId));
  }

  /** The context's tasks (ListTasks, whole histories), oldest first, as turns. */
  async history(): Promise<HistoryTurn[]> {
    const listed = await this.client.listTasks({
      tenant: "",
      contextId: this.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    const tasks = [...listed.tasks].reverse();
    const answered = new Set(
      tasks.flatMap((task) => task.history.flatMap((m) => dataOf(m, "toolResult"))).map((r) => r.toolCallId),
    );
    return tasks.map((task) => ({
      user: partsText(task.history[0]?.parts),
      texts: agentTexts(task.history),
      toolCalls: task.history
        .flatMap((m) => dataOf(m, "toolCall"))
        .map((call) => ({ id: call.id, name: call.name, answered: answered.has(call.id) })),
    }));
  }

  async close(): Promise<void> {}

  private async streamToRest(stream: AsyncGenerator<StreamResponse>): Promise<TurnView> {
    let taskId = "";
    for await (const event of stream) taskId = taskIdOf(event) ?? taskId;
    return this.viewOf(await this.read(taskId));
  }

  private read(id: string): Promise<Task> {
    return this.client.getTask({ tenant: "", id, historyLength: undefined });
  }

  private async latestTask(): Promise<Task> {
    const listed = await this.client.listTasks({
      tenant: "",
      contextId: this.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    const task = listed.tasks[0];
    if (!task) throw new Error("the context has no task");
    return task;
  }

  private viewOf(task: Task): TurnView {
    const state = task.status?.state;
    const pending = new Map(
      (task.status?.message ? dataOf(task.status.message, "pendingToolCalls").flat() : []).map((p: Data) => [
        p.id,
        p.answer,
      ]),
    );
    const results = new Set(task.history.flatMap((m) => dataOf(m, "toolResult")).map((r) => r.toolCallId));
    const denied = new Set(
      task.history
        .flatMap((m) => dataOf(m, "toolConfirmation"))
        .flatMap((c) => (c.approved === false ? [c.toolCallId] : [])),
    );
    const toolCalls: ToolCallView[] = task.history
      .flatMap((m) => dataOf(m, "toolCall"))
      .map((call) => {
        let callState: ToolCallState = "incomplete";
        if (denied.has(call.id)) callState = "denied";
        else if (results.has(call.id)) callState = "done";
        else if (pending.has(call.id))
          callState = pending.get(call.id) === "approval" ? "awaiting_approval" : "awaiting_result";
        return { id: call.id, name: call.name, state: callState };
      });
    const text = partsText(task.artifacts.at(-1)?.parts);
    const end = endOf(state);
    if (end === "error") return { end, text, toolCalls, error: partsText(task.status?.message?.parts) };
    return { end, text, toolCalls };
  }
}

function endOf(state: TaskState | undefined): TurnEnd {
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return "natural";
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return "waiting";
    case TaskState.TASK_STATE_FAILED:
      return "error";
    case TaskState.TASK_STATE_CANCELED:
      return "interrupted";
    default:
      throw new Error(`the task is not at rest: ${state === undefined ? "no state" : TaskState[state]}`);
  }
}

function taskIdOf(event: StreamResponse): string | undefined {
  const p = event.payload;
  if (p?.$case === "task") return p.value.id;
  if (p?.$case === "statusUpdate" || p?.$case === "artifactUpdate") return p.value.taskId;
  return undefined;
}

/** The values of a message's data parts under `key` (`toolCall`, `toolResult`, …). */
function dataOf(message: Message, key: string): Data[] {
  return message.parts.flatMap((p) =>
    p.content?.$case === "data" && p.content.value?.[key] !== undefined ? [p.content.value[key]] : [],
  );
}

/** The agent's texts in a history, in order: the turn's user message is the first message. */
function agentTexts(history: readonly Message[]): string[] {
  return history.slice(1).flatMap((m) => {
    if (m.parts.some((p) => p.content?.$case === "data")) return [];
    const text = partsText(m.parts);
    return m.role === Role.ROLE_AGENT && text !== "" ? [text] : [];
  });
}
