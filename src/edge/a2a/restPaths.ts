/**
 * The paths of the A2A HTTP+JSON binding under an agent's REST interface, parsed by hand because
 * the binding puts verbs after a colon (`/tasks/{id}:cancel`), which route patterns read as a
 * parameter. Ids arrive percent-encoded, as the official client writes them.
 */
export type RestOperation =
  | { op: "send" }
  | { op: "stream" }
  | { op: "extendedCard" }
  | { op: "listTasks" }
  | { op: "getTask"; taskId: string }
  | { op: "cancelTask"; taskId: string }
  | { op: "subscribe"; taskId: string }
  | { op: "createPushConfig"; taskId: string }
  | { op: "listPushConfigs"; taskId: string }
  | { op: "getPushConfig"; taskId: string; configId: string }
  | { op: "deletePushConfig"; taskId: string; configId: string };

/** A path this binding has, with the methods it takes there; `operation` is null for any other method. */
export interface RestRoute {
  allowed: readonly string[];
  operation: RestOperation | null;
}

/** `path` is what follows the interface URL (`/message:send`, `/tasks/abc:cancel`); null when no such path. */
export function restRouteOf(method: string, path: string): RestRoute | null {
  const segments = path.split("/").slice(1);
  const pick = (allowed: string[], operations: Record<string, RestOperation>): RestRoute => ({
    allowed,
    operation: operations[method] ?? null,
  });
  const [first, second, third, fourth, ...rest] = segments;
  if (rest.length > 0 || first === undefined) return null;
  if (second === undefined) {
    if (first === "message:send") return pick(["POST"], { POST: { op: "send" } });
    if (first === "message:stream") return pick(["POST"], { POST: { op: "stream" } });
    if (first === "extendedAgentCard") return pick(["GET"], { GET: { op: "extendedCard" } });
    if (first === "tasks") return pick(["GET"], { GET: { op: "listTasks" } });
    return null;
  }
  if (first !== "tasks") return null;
  if (third === undefined) {
    const [rawId, verb, extra] = second.split(":");
    const taskId = decoded(rawId);
    if (taskId === null || extra !== undefined) return null;
    if (verb === undefined) return pick(["GET"], { GET: { op: "getTask", taskId } });
    if (verb === "cancel") return pick(["POST"], { POST: { op: "cancelTask", taskId } });
    if (verb === "subscribe") {
      const subscribe: RestOperation = { op: "subscribe", taskId };
      return pick(["GET", "POST"], { GET: subscribe, POST: subscribe });
    }
    return null;
  }
  const taskId = decoded(second);
  if (taskId === null || third !== "pushNotificationConfigs") return null;
  if (fourth === undefined) {
    return pick(["GET", "POST"], {
      GET: { op: "listPushConfigs", taskId },
      POST: { op: "createPushConfig", taskId },
    });
  }
  const configId = decoded(fourth);
  if (configId === null) return null;
  return pick(["GET", "DELETE"], {
    GET: { op: "getPushConfig", taskId, configId },
    DELETE: { op: "deletePushConfig", taskId, configId },
  });
}

/** A path segment's value; null for an empty or malformed one. */
function decoded(segment: string | undefined): string | null {
  if (!segment) return null;
  try {
    const value = decodeURIComponent(segment);
    return value === "" ? null : value;
  } catch {
    return null;
  }
}
