import type { StreamResponse } from "@a2a-js/sdk";
import { A2AError, RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import { AwakenError } from "../../kernel/errors.js";

/**
 * The handler as the SDK's transports call it: every failure leaves as a protocol error. A product
 * refusal keeps its message; anything unexpected is logged and leaves without detail, so no stack
 * or internal message (which could carry a secret) reaches the wire.
 */
export function guarded(
  inner: A2ARequestHandler,
  requestId: string,
  log: (error: unknown) => void,
): A2ARequestHandler {
  const map = (error: unknown): unknown => {
    if (error instanceof A2AError) return error;
    if (error instanceof AwakenError && error.category !== "internal" && error.category !== "unavailable") {
      return error.category === "not_found"
        ? new TaskNotFoundError(error.message)
        : new RequestMalformedError(error.message);
    }
    log(error);
    return new Error(`Internal server error. Quote request id ${requestId} when reporting it.`);
  };
  const call =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (error) {
        throw map(error);
      }
    };
  const stream = <A extends unknown[]>(fn: (...args: A) => AsyncGenerator<StreamResponse, void, undefined>) =>
    async function* (...args: A): AsyncGenerator<StreamResponse, void, undefined> {
      try {
        yield* fn(...args);
      } catch (error) {
        throw map(error);
      }
    };
  return {
    getAgentCard: call(() => inner.getAgentCard()),
    getAuthenticatedExtendedAgentCard: call((p, c) => inner.getAuthenticatedExtendedAgentCard(p, c)),
    sendMessage: call((p, c) => inner.sendMessage(p, c)),
    sendMessageStream: stream((p, c) => inner.sendMessageStream(p, c)),
    getTask: call((p, c) => inner.getTask(p, c)),
    cancelTask: call((p, c) => inner.cancelTask(p, c)),
    createTaskPushNotificationConfig: call((p, c) => inner.createTaskPushNotificationConfig(p, c)),
    getTaskPushNotificationConfig: call((p, c) => inner.getTaskPushNotificationConfig(p, c)),
    listTaskPushNotificationConfigs: call((p, c) => inner.listTaskPushNotificationConfigs(p, c)),
    deleteTaskPushNotificationConfig: call((p, c) => inner.deleteTaskPushNotificationConfig(p, c)),
    resubscribe: stream((p, c) => inner.resubscribe(p, c)),
    listTasks: call((p, c) => inner.listTasks(p, c)),
  };
}
