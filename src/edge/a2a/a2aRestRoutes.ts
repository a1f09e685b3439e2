import {
  A2A_CONTENT_TYPE,
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { A2AError, VersionNotSupportedError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import { ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../../kernel/clock.js";
import { parseJsonBodyText } from "../http/jsonBodyParser.js";
import type { A2aPorts } from "./a2aPorts.js";
import { type AgentParams, cardFor, requestHandlerFor } from "./requestHandlerFor.js";
import { restErrorBodyOf, restStatusOf, writeRestError } from "./restErrors.js";
import { type RestOperation, restRouteOf } from "./restPaths.js";
import { historyLengthOf, listTasksRequestOf, pushConfigOf, sendMessageRequestOf } from "./restRequests.js";
import { answerWithSse } from "./sseAnswer.js";

/** Where an agent's HTTP+JSON interface lives, below its JSON-RPC URL. */
export const REST_SUFFIX = "/rest";
const ROUTE = `/v1/a2a/agents/:agentId${REST_SUFFIX}`;

type Query = Record<string, string | string[] | undefined>;
type RestRequest = FastifyRequest<AgentParams & { Querystring: Query }>;

/**
 * The A2A HTTP+JSON binding (protocol 1.0) of each agent: the same request handler as JSON-RPC,
 * reached by resource paths and HTTP verbs, with REST error bodies (`{error: {code, status,
 * message, details}}`) and SSE for the streaming methods.
 */
export function a2aRestRoutes(app: FastifyInstance, portsFor: (request: FastifyRequest) => A2aPorts): void {
  // The binding's own media type is JSON too; it gets the same guarded parser as every body.
  app.addContentTypeParser(A2A_CONTENT_TYPE, { parseAs: "string" }, (_request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    try {
      done(null, text.trim() === "" ? undefined : parseJsonBodyText(text));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.route<AgentParams & { Querystring: Query }>({
    method: ["GET", "POST", "DELETE"],
    url: `${ROUTE}/*`,
    handler: async (request, reply) => {
      // What follows `/v1/a2a/agents/{agentId}/rest`, still percent-encoded (restPaths decodes it);
      // cut by segment, since an agent id may itself contain "rest".
      const path = `/${(request.url.split("?")[0] ?? "").split("/").slice(6).join("/")}`;
      const route = restRouteOf(request.method, path);
      if (!route) {
        writeRestError(reply, 404, "NOT_FOUND", `No HTTP+JSON operation at ${path}.`);
        return;
      }
      if (!route.operation) {
        reply.header("allow", route.allowed.join(", "));
        writeRestError(
          reply,
          405,
          "INVALID_ARGUMENT",
          `${request.method} is not allowed on ${path}; use ${route.allowed.join(", ")}.`,
        );
        return;
      }
      try {
        await answer(portsFor(request), request, reply, route.operation);
      } catch (error) {
        // A protocol error is answered here; anything else (an unknown agent, a store failure) takes
        // the edge's error path, which classifies it and answers in this binding's shape.
        if (!(error instanceof A2AError)) throw error;
        if (reply.sent || reply.raw.headersSent) return;
        void reply.status(restStatusOf(error)).type(A2A_CONTENT_TYPE).send(restErrorBodyOf(error));
      }
    },
  });
}

async function answer(ports: A2aPorts, request: RestRequest, reply: FastifyReply, operation: RestOperation) {
  requireVersion(request);
  const card = await cardFor(ports, request);
  const { handler, closed } = requestHandlerFor(ports, request, reply, card);
  const context = new ServerCallContext({ requestedVersion: "1.0" });
  const send = (status: number, body: unknown) => void reply.status(status).type(A2A_CONTENT_TYPE).send(body);
  switch (operation.op) {
    case "send": {
      const params = sendMessageRequestOf(request.body);
      const result = await handler.sendMessage(params, context);
      const payload =
        "messageId" in result
          ? { $case: "message" as const, value: result }
          : { $case: "task" as const, value: result };
      return send(200, SendMessageResponse.toJSON({ payload }));
    }
    case "stream":
      return stream(request, reply, handler.sendMessageStream(sendMessageRequestOf(request.body), context), {
        pingMs: ports.pingMs,
        clock: ports.clock,
        closed,
      });
    case "subscribe":
      return stream(request, reply, handler.resubscribe({ id: operation.taskId, tenant: "" }, context), {
        pingMs: ports.pingMs,
        clock: ports.clock,
        closed,
      });
    case "getTask": {
      const historyLength = historyLengthOf(request.query);
      const task = await handler.getTask({ id: operation.taskId, tenant: "", historyLength }, context);
      return send(200, Task.toJSON(task));
    }
    case "listTasks": {
      const result = await handler.listTasks(listTasksRequestOf(request.query), context);
      return send(200, ListTasksResponse.toJSON(result));
    }
    case "cancelTask": {
      const task = await handler.cancelTask(
        { id: operation.taskId, tenant: "", metadata: undefined },
        context,
      );
      return send(200, Task.toJSON(task));
    }
    case "extendedCard": {
      const extended = await handler.getAuthenticatedExtendedAgentCard({ tenant: "" }, context);
      return send(200, AgentCard.toJSON(extended));
    }
    case "createPushConfig": {
      const config = pushConfigOf(request.body, operation.taskId);
      const created = await handler.createTaskPushNotificationConfig(config, context);
      return send(201, TaskPushNotificationConfig.toJSON(created));
    }
    case "listPushConfigs": {
      const listed = await handler.listTaskPushNotificationConfigs(
        { taskId: operation.taskId, pageSize: 0, pageToken: "", tenant: "" },
        context,
      );
      return send(200, ListTaskPushNotificationConfigsResponse.toJSON(listed));
    }
    case "getPushConfig": {
      const config = await handler.getTaskPushNotificationConfig(
        { taskId: operation.taskId, id: operation.configId, tenant: "" },
        context,
      );
      return send(200, TaskPushNotificationConfig.toJSON(config));
    }
    case "deletePushConfig":
      await handler.deleteTaskPushNotificationConfig(
        { taskId: operation.taskId, id: operation.configId, tenant: "" },
        context,
      );
      return void reply.status(204).send();
  }
}

function stream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: ReturnType<A2ARequestHandler["sendMessageStream"]>,
  options: { pingMs: number; clock: Clock; closed: AbortController },
): Promise<void> {
  return answerWithSse(request, reply, events, {
    ...options,
    encode: (event) => StreamResponse.toJSON(event as StreamResponse),
    refuse: (r, error) =>
      void r.status(restStatusOf(error)).type(A2A_CONTENT_TYPE).send(restErrorBodyOf(error)),
    failure: (error) => ({ event: "error", data: restErrorBodyOf(error) }),
  });
}

/** This binding speaks protocol 1.0; a peer asking for another version is told so. */
function requireVersion(request: FastifyRequest): void {
  const header = request.headers["a2a-version"];
  const version = typeof header === "string" ? header.trim() : "";
  if (version === "" || version === "1" || version === "1.0" || version.startsWith("1.")) return;
  throw new VersionNotSupportedError(
    `The HTTP+JSON interface speaks A2A protocol 1.0, not ${JSON.stringify(version)}.`,
  );
}
