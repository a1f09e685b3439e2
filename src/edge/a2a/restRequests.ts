import {
  type ListTasksRequest,
  SendMessageRequest,
  TaskPushNotificationConfig,
  TaskState,
  taskStateFromJSON,
} from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";

/**
 * Request bodies and query strings of the HTTP+JSON binding → the handler's typed requests. The
 * generated `fromJSON` readers are lenient; what they cannot read (a body that is not an object,
 * a malformed number) is refused here as invalid params, before anything runs.
 */
type Query = Record<string, string | string[] | undefined>;

export function sendMessageRequestOf(body: unknown): SendMessageRequest {
  const request = decode(body, (json) => SendMessageRequest.fromJSON(json));
  if (!request.message) throw new RequestMalformedError("message is required.");
  if (!request.message.messageId) throw new RequestMalformedError("message.messageId is required.");
  return request;
}

export function pushConfigOf(body: unknown, taskId: string): TaskPushNotificationConfig {
  return decode(body, (json) => TaskPushNotificationConfig.fromJSON({ ...json, taskId }));
}

export function historyLengthOf(query: Query): number | undefined {
  const raw = one(query, "historyLength") ?? one(query, "history_length");
  return raw === undefined ? undefined : integer(raw, "historyLength", 0, Number.MAX_SAFE_INTEGER);
}

export function listTasksRequestOf(query: Query): ListTasksRequest {
  const status = one(query, "status");
  const pageSize = one(query, "pageSize");
  return {
    tenant: "",
    contextId: one(query, "contextId") ?? "",
    status: status ? stateOf(status) : TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: pageSize ? integer(pageSize, "pageSize", 1, 100) : undefined,
    pageToken: one(query, "pageToken") ?? "",
    historyLength: historyLengthOf(query),
    statusTimestampAfter: timestampOf(one(query, "statusTimestampAfter")),
    includeArtifacts: booleanOf(one(query, "includeArtifacts")),
  };
}

function decode<T>(body: unknown, read: (json: Record<string, unknown>) => T): T {
  if (body !== undefined && (body === null || typeof body !== "object" || Array.isArray(body))) {
    throw new RequestMalformedError("The request body must be a JSON object.");
  }
  try {
    return read((body ?? {}) as Record<string, unknown>);
  } catch (error) {
    throw new RequestMalformedError(`The request body could not be read: ${(error as Error).message}`);
  }
}

/** A query parameter given once; repeating one is ambiguous and refused. */
function one(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new RequestMalformedError(`${name} may be given once.`);
  return value === "" ? undefined : value;
}

function integer(raw: string, name: string, min: number, max: number): number {
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RequestMalformedError(`${name} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function stateOf(raw: string): TaskState {
  const state = taskStateFromJSON(/^\d+$/.test(raw) ? Number(raw) : raw);
  if (state === TaskState.UNRECOGNIZED) {
    throw new RequestMalformedError(
      `status ${JSON.stringify(raw)} is not a task state (e.g. TASK_STATE_COMPLETED).`,
    );
  }
  return state;
}

function timestampOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (Number.isNaN(Date.parse(raw))) {
    throw new RequestMalformedError("statusTimestampAfter must be an ISO 8601 timestamp.");
  }
  return raw;
}

function booleanOf(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === "true" || raw === "false") return raw === "true";
  throw new RequestMalformedError("includeArtifacts must be true or false.");
}
