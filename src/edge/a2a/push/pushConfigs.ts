import { randomUUID } from "node:crypto";
import type { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { SessionRecord } from "../../../coordinator/ports.js";
import type { PushOutboxStore, PushSubscription } from "../../../coordinator/pushOutbox.js";
import type { WebhookTargets } from "../../http/webhookTargets.js";
import { type TurnTask, taskOf } from "../taskProjection.js";
import { isTerminal } from "../taskTracker.js";
import { pushMessageOf } from "./pushPayloads.js";

/** What push configs need: the durable store and the webhook URL policy. */
export interface A2aPush {
  store: PushOutboxStore;
  targets: WebhookTargets;
  now(): number;
}

const MAX_ID = 128;
const MAX_SECRET = 4096;
/** Visible ASCII and spaces: what an HTTP header value may carry (no CR/LF smuggling). */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/** A config as a client may set it, checked: every refusal is invalid params and writes nothing. */
export async function checkedConfig(
  push: A2aPush,
  config: TaskPushNotificationConfig,
): Promise<TaskPushNotificationConfig> {
  const id = config.id === "" ? randomUUID() : config.id;
  if (id.length > MAX_ID || !/^[\w.:-]+$/.test(id)) {
    throw new RequestMalformedError(`push notification config id must be 1 to ${MAX_ID} of [A-Za-z0-9_.:-]`);
  }
  const refusal = await push.targets.refusal(config.url);
  if (refusal) throw new RequestMalformedError(refusal);
  const auth = config.authentication;
  for (const [name, value] of [
    ["token", config.token],
    ["authentication.scheme", auth?.scheme ?? ""],
    ["authentication.credentials", auth?.credentials ?? ""],
  ] as const) {
    if (value.length > MAX_SECRET || !HEADER_VALUE.test(value)) {
      throw new RequestMalformedError(
        `push notification ${name} must be at most ${MAX_SECRET} printable ASCII characters`,
      );
    }
  }
  if (auth && auth.scheme !== "" && !/^[\w-]+$/.test(auth.scheme)) {
    throw new RequestMalformedError("push notification authentication.scheme must be a single word (Bearer)");
  }
  return { ...config, id };
}

/**
 * Stores a checked config for the task as it stands: its cursor is the task's last committed
 * fact, and its first notification is the task as of that fact, so a config set after the task
 * moved on (or ended) still hears where it is, then every change after.
 */
export async function subscribe(
  push: A2aPush,
  scope: { workspaceId: string; agentId: string },
  session: SessionRecord,
  task: TurnTask,
  config: TaskPushNotificationConfig,
  wireVersion: string,
): Promise<TaskPushNotificationConfig> {
  const now = push.now();
  const cursorSeq = task.facts.at(-1)?.seq ?? task.userFact.seq;
  const subscription: PushSubscription = {
    workspaceId: scope.workspaceId,
    taskId: task.id,
    configId: config.id,
    agentId: scope.agentId,
    sessionId: session.id,
    threadId: session.threadId,
    url: config.url,
    token: config.token,
    authScheme: config.authentication?.scheme ?? "",
    authCredentials: config.authentication?.credentials ?? "",
    wireVersion: wireVersion === "0.3" ? "0.3" : "1.0",
    cursorSeq,
    // A task that ended has nothing more to say after its first notification.
    finished: isTerminal(task.tracker.state),
    createdAt: now,
  };
  const first = pushMessageOf({ payload: { $case: "task", value: taskOf(task) } }, subscription.wireVersion);
  await push.store.subscribe(subscription, first, now);
  const stored = await push.store.subscription(scope.workspaceId, task.id, config.id);
  return viewOf(stored ?? subscription);
}

/** A stored config as answered: the token and credentials stay on the server. */
export function viewOf(s: PushSubscription): TaskPushNotificationConfig {
  return {
    tenant: "",
    id: s.configId,
    taskId: s.taskId,
    url: s.url,
    token: "",
    authentication: s.authScheme === "" ? undefined : { scheme: s.authScheme, credentials: "" },
  };
}

export function configNotFound(taskId: string, id: string): TaskNotFoundError {
  return new TaskNotFoundError(
    `Push notification config ${JSON.stringify(id)} was not found for task ${JSON.stringify(taskId)}.`,
  );
}
