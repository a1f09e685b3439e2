import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { TaskState } from "@a2a-js/sdk";
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { A2aPorts } from "./a2aPorts.js";
import { RETRY_WINDOW_MS } from "./a2aServicePorts.js";
import { listTasks } from "./listTasks.js";
import { answerInputs, newTurnInput } from "./messageInputs.js";
import { PushConfigRequests } from "./push/pushConfigRequests.js";
import { checkedConfig, subscribe } from "./push/pushConfigs.js";
import { parseTaskId } from "./taskIds.js";
import { projectTasks, type TurnTask, taskOf } from "./taskProjection.js";
import { TaskStreamFormatter } from "./taskStream.js";
import { isResting, isTerminal } from "./taskTracker.js";

export interface TaskRequestScope {
  workspaceId: string;
  agentId: string;
  card: AgentCard;
  /** Aborts when the client goes away: live reads stop (the task itself runs on). */
  closed: AbortSignal;
}

type Located = { session: SessionRecord; tasks: TurnTask[]; task: TurnTask };

/**
 * The protocol's request handler over the session service: a context is a session, a task is one
 * of its turns (see `taskProjection.ts`), and every answer is read from committed facts. One is made
 * per request, bound to the workspace and agent the request addressed. Every refusal is decided
 * before anything is written.
 */
export class TaskRequestHandler implements A2ARequestHandler {
  private readonly pushConfigs: PushConfigRequests;

  constructor(
    private readonly ports: A2aPorts,
    private readonly scope: TaskRequestScope,
  ) {
    this.pushConfigs = new PushConfigRequests(ports.push, scope, (id) => this.locate(id));
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.scope.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError("This agent has no extended card.");
  }

  async sendMessage(params: SendMessageRequest, context?: ServerCallContext): Promise<Message | Task> {
    const stream = this.sendMessageStream(params, context);
    let last: Task | null = null;
    for await (const event of stream) {
      if (event.payload?.$case !== "task") continue;
      last = event.payload.value;
      if (params.configuration?.returnImmediately) {
        await stream.return(undefined);
        return last;
      }
    }
    if (!last) throw new UnsupportedOperationError("The task could not be read.");
    // The blocking answer is the task as committed once it came to rest.
    const found = await this.locate(last.id);
    return found ? taskOf(found.task) : last;
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context?: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const message = params.message;
    if (!message) throw new RequestMalformedError("params.message is required.");
    const repeat = await this.repeated(message);
    if (repeat) {
      yield* this.follow(repeat.session, repeat.task, repeat.upTo, params.configuration?.historyLength);
      return;
    }
    const { session, task, inputs } = await this.plan(message);
    // A push config sent with the message is checked before the message is entered.
    const pushConfig = params.configuration?.taskPushNotificationConfig;
    const push = pushConfig ? this.ports.push : null;
    if (pushConfig && !push) throw pushNotSupported();
    const checkedPush = push && pushConfig ? await checkedConfig(push, pushConfig) : null;
    const target =
      session ??
      (await this.ports.startSession(
        this.scope.workspaceId,
        this.scope.agentId,
        message.messageId || undefined,
      ));
    const echo = await this.ports.send(this.scope.workspaceId, target.id, inputs, {
      key: sendKey(message.messageId || JSON.stringify(inputs)),
      strict: message.messageId !== "",
      windowMs: RETRY_WINDOW_MS,
    });
    // An answer routed to a subagent echoes on the subagent's thread: the task is then read to
    // this thread's head.
    const own = echo.filter((f) => f.threadId === target.threadId);
    const facts =
      own.length > 0
        ? await this.ports.history(target.threadId, 0, Math.max(...own.map((f) => f.seq)))
        : await this.ports.history(target.threadId, 0);
    const upTo = facts.at(-1)?.seq ?? 0;
    const taskFactId = task?.userFact.id ?? echo.find((f) => f.kind === "user_message")?.id;
    const current = projectTasks(target.id, facts).find((t) => t.userFact.id === taskFactId);
    if (!current) throw new UnsupportedOperationError("The message did not open a task.");
    if (push && checkedPush) {
      const version = context?.requestedVersion ?? "1.0";
      await subscribe(push, this.scope, target, current, checkedPush, version);
    }
    yield* this.follow(target, current, upTo, params.configuration?.historyLength);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    const found = await this.locate(params.id);
    if (!found) throw taskNotFound(params.id);
    return taskOf(found.task, { historyLength: params.historyLength });
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    let context: SessionRecord | null = null;
    if (params.contextId !== "") {
      context = await this.agentSession(params.contextId);
      if (!context) return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    }
    return listTasks(this.ports, this.scope, context, params);
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const found = await this.locate(params.id);
    if (!found) throw taskNotFound(params.id);
    for (let attempt = 0; attempt < 2; attempt++) {
      const { session, task, tasks } = (attempt === 0 ? found : await this.locate(params.id)) ?? found;
      const state = task.tracker.state;
      if (isTerminal(state) || tasks.at(-1) !== task) {
        throw new TaskNotCancelableError(`Task ${task.id} is ${state}; a finished task cannot be canceled.`);
      }
      // A running turn is interrupted only while it still runs (the ledger decides, so no race with
      // its ending); a parked one drops what it waits for.
      await this.ports.send(this.scope.workspaceId, session.id, [
        state === "input-required" ? { kind: "interrupt" } : { kind: "interrupt", onlyWhileWorking: true },
      ]);
      const after = await this.locate(params.id);
      if (after && isTerminal(after.task.tracker.state)) return taskOf(after.task);
    }
    throw new TaskNotCancelableError(`Task ${params.id} could not be canceled; read it again.`);
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const found = await this.locate(params.id);
    if (!found) throw taskNotFound(params.id);
    if (isTerminal(found.task.tracker.state)) {
      throw new UnsupportedOperationError(
        `Task ${params.id} is ${found.task.tracker.state}; read it with GetTask instead.`,
      );
    }
    yield* this.follow(found.session, found.task, found.task.facts.at(-1)?.seq ?? 0, undefined);
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context?: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs.create(params, context?.requestedVersion ?? "1.0");
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
  ): Promise<TaskPushNotificationConfig> {
    return this.pushConfigs.get(params);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.pushConfigs.list(params);
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return this.pushConfigs.delete(params);
  }

  /**
   * The task as it stands (`upTo` is the last fact it was read to), then its live updates until it
   * comes to rest. A task already at rest is the snapshot alone.
   */
  private async *follow(
    session: SessionRecord,
    task: TurnTask,
    upTo: number,
    historyLength: number | undefined,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    yield { payload: { $case: "task", value: taskOf(task, { historyLength }) } };
    if (isResting(task.tracker.state)) return;
    const formatter = new TaskStreamFormatter(task);
    for await (const item of this.ports.tail(session, upTo, this.scope.closed)) {
      if (item.kind === "preview") {
        yield* formatter.preview(item.evidence);
        continue;
      }
      const { events, rested } = formatter.fact(item.fact);
      yield* events;
      if (rested) return;
    }
  }

  /**
   * A message this agent already took (same message id, within the retry window): a peer retrying
   * a send whose answer it lost. It gets the task that send opened or answered, never a second one.
   */
  private async repeated(message: Message): Promise<(Located & { upTo: number }) | null> {
    if (message.messageId === "") return null;
    let session: SessionRecord | null = null;
    if (message.taskId !== "") {
      const ids = parseTaskId(message.taskId);
      session = ids ? await this.agentSession(ids.sessionId) : null;
    } else if (message.contextId !== "") {
      session = await this.agentSession(message.contextId);
    } else {
      session = await this.ports.openedBy(this.scope.workspaceId, this.scope.agentId, message.messageId);
    }
    if (!session) return null;
    const echo = await this.ports.repeatedSend(
      this.scope.workspaceId,
      session.id,
      sendKey(message.messageId),
    );
    if (!echo || echo.length === 0) return null;
    const echoed = new Set(echo.map((f) => f.id));
    const facts = await this.ports.history(session.threadId, 0);
    // The snapshot is the task as read now; live updates follow from there.
    const upTo = facts.at(-1)?.seq ?? 0;
    const tasks = projectTasks(session.id, facts);
    const task = tasks.find((t) => echoed.has(t.userFact.id) || t.facts.some((f) => echoed.has(f.id)));
    return task ? { session, tasks, task, upTo } : null;
  }

  /** What a message does, decided from committed facts before anything is written. */
  private async plan(
    message: Message,
  ): Promise<{ session: SessionRecord | null; task: TurnTask | null; inputs: DomainInput[] }> {
    if (message.taskId !== "") {
      const found = await this.locate(message.taskId);
      if (!found || (message.contextId !== "" && message.contextId !== found.session.id)) {
        throw taskNotFound(message.taskId);
      }
      const { task, session, tasks } = found;
      const state = task.tracker.state;
      if (state !== "input-required" || tasks.at(-1) !== task) {
        throw new UnsupportedOperationError(
          `Task ${task.id} is ${state} and takes no more messages` +
            (isTerminal(state)
              ? "; send a new message without taskId to start another task."
              : "; wait for it."),
        );
      }
      return { session, task, inputs: answerInputs(message, task.tracker.asked) };
    }
    const inputs = [newTurnInput(message)];
    if (message.contextId === "") return { session: null, task: null, inputs };
    const session = await this.agentSession(message.contextId);
    if (!session) {
      throw new RequestMalformedError(
        `contextId ${JSON.stringify(message.contextId)} names no context of this agent; leave it empty to start one.`,
      );
    }
    const latest = projectTasks(session.id, await this.ports.history(session.threadId, 0)).at(-1);
    if (latest && !isTerminal(latest.tracker.state)) {
      throw new UnsupportedOperationError(
        latest.tracker.state === "input-required"
          ? `Task ${latest.id} of this context waits for input; answer it with taskId ${latest.id}, or cancel it.`
          : `Task ${latest.id} of this context is still working; wait for it or cancel it.`,
      );
    }
    return { session, task: null, inputs };
  }

  private async locate(taskId: string): Promise<Located | null> {
    const ids = parseTaskId(taskId);
    if (!ids) return null;
    const session = await this.agentSession(ids.sessionId);
    if (!session) return null;
    const tasks = projectTasks(session.id, await this.ports.history(session.threadId, 0));
    const task = tasks.find((t) => t.userFact.id === ids.factId);
    return task ? { session, tasks, task } : null;
  }

  /** The session, when it is this agent's in this workspace. */
  private async agentSession(sessionId: string): Promise<SessionRecord | null> {
    if (!sessionId.startsWith("sesn_")) return null;
    const session = await this.ports.session(this.scope.workspaceId, sessionId);
    return session && session.agent.agentId === this.scope.agentId ? session : null;
  }
}

/** The dedupe key of a send: the message id (or, without one, the inputs it carries). */
function sendKey(identity: string): string {
  return `a2a:${identity}`;
}

function taskNotFound(id: string): TaskNotFoundError {
  return new TaskNotFoundError(`Task ${JSON.stringify(id)} was not found for this agent.`);
}

function pushNotSupported(): PushNotificationNotSupportedError {
  return new PushNotificationNotSupportedError("This agent does not send push notifications.");
}

/** `TASK_STATE_UNSPECIFIED` in a filter means any state. */
export const ANY_STATE = TaskState.TASK_STATE_UNSPECIFIED;
