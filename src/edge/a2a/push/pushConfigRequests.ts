import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { PushNotificationNotSupportedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { SessionRecord } from "../../../coordinator/ports.js";
import type { TurnTask } from "../taskProjection.js";
import { type A2aPush, checkedConfig, configNotFound, subscribe, viewOf } from "./pushConfigs.js";

type Locate = (taskId: string) => Promise<{ session: SessionRecord; task: TurnTask } | null>;

/**
 * The four push-notification config methods for one request's workspace and agent: a config
 * belongs to a task this agent has in this workspace, and every refusal (unknown task, refused
 * URL) is decided before anything is written.
 */
export class PushConfigRequests {
  constructor(
    private readonly push: A2aPush | null,
    private readonly scope: { workspaceId: string; agentId: string },
    private readonly locate: Locate,
  ) {}

  async create(params: TaskPushNotificationConfig, wireVersion: string): Promise<TaskPushNotificationConfig> {
    const push = this.enabled();
    const found = await this.found(params.taskId);
    const config = await checkedConfig(push, params);
    return subscribe(push, this.scope, found.session, found.task, config, wireVersion);
  }

  async get(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    const push = this.enabled();
    const { task } = await this.found(params.taskId);
    const stored = await push.store.subscription(this.scope.workspaceId, task.id, params.id);
    if (!stored) throw configNotFound(task.id, params.id);
    return viewOf(stored);
  }

  async list(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const push = this.enabled();
    const { task } = await this.found(params.taskId);
    const stored = await push.store.subscriptions(this.scope.workspaceId, task.id);
    return { configs: stored.map(viewOf), nextPageToken: "" };
  }

  async delete(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    const push = this.enabled();
    const { task } = await this.found(params.taskId);
    if (!(await push.store.unsubscribe(this.scope.workspaceId, task.id, params.id))) {
      throw configNotFound(task.id, params.id);
    }
  }

  private enabled(): A2aPush {
    if (!this.push)
      throw new PushNotificationNotSupportedError("This agent does not send push notifications.");
    return this.push;
  }

  private async found(taskId: string) {
    const found = await this.locate(taskId);
    if (!found) throw new TaskNotFoundError(`Task ${JSON.stringify(taskId)} was not found for this agent.`);
    return found;
  }
}
