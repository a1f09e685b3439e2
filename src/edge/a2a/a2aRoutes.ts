import { AgentCard } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "../http/auth.js";
import { writeRpcError } from "./a2aErrors.js";
import type { A2aPorts } from "./a2aPorts.js";
import { agentCardOf } from "./agentCard.js";
import { guarded } from "./guardedHandler.js";
import { openRpcStream } from "./rpcStream.js";
import { TaskRequestHandler } from "./taskRequestHandler.js";

const VERSION_HEADER = "a2a-version";
const ROUTE = "/v1/a2a/agents/:agentId";
const CARD_MAX_AGE_S = 60;

type AgentParams = { Params: { agentId: string } };

/**
 * The A2A edge: each agent's card, and its JSON-RPC interface, where protocol 1.0 and 0.3 peers
 * share one URL. The `A2A-Version` header chooses the version; without one, the method name does
 * (`message/send` is 0.3, `SendMessage` 1.0). The SDK's transports parse and shape the wire; the
 * request handler answers over the session service.
 */
export function a2aRoutes(app: FastifyInstance, ports: A2aPorts): void {
  app.get<AgentParams>(`${ROUTE}/.well-known/agent-card.json`, async (request, reply) => {
    const card = await cardFor(ports, request);
    void reply
      .header("cache-control", `private, max-age=${CARD_MAX_AGE_S}`)
      .type("application/json")
      .send(AgentCard.toJSON(card));
  });

  app.post<AgentParams>(ROUTE, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const body = request.body as { method?: unknown; id?: unknown } | undefined;
    const legacy = isLegacy(request, body?.method);
    if (legacy === null) {
      writeRpcError(reply, body?.id, -32009, "This agent speaks A2A protocol 1.0 and 0.3.");
      return;
    }
    const card = await cardFor(ports, request);
    const closed = new AbortController();
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) closed.abort();
    });
    const handler = guarded(
      new TaskRequestHandler(ports, {
        workspaceId,
        agentId: request.params.agentId,
        card,
        closed: closed.signal,
      }),
      request.id,
      (error) => request.log.error({ err: error }, "a2a request failed"),
    );
    const transport = legacy
      ? new LegacyJsonRpcTransportHandler(handler)
      : new JsonRpcTransportHandler(handler);
    const context = new ServerCallContext({ requestedVersion: legacy ? "0.3" : "1.0" });
    const result = await transport.handle((body ?? {}) as Record<string, unknown>, context);
    if (!isAsyncIterable(result)) {
      void reply.type("application/json").send(result);
      return;
    }
    const toError = legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : JsonRpcTransportHandler.mapToJSONRPCError;
    const id = typeof body?.id === "string" || typeof body?.id === "number" ? body.id : null;
    await streamResult(request, reply, result, {
      pingMs: ports.pingMs,
      closed,
      errorOf: (error) => ({ jsonrpc: "2.0", id, error: toError(error) }),
    });
  });
}

async function cardFor(ports: A2aPorts, request: FastifyRequest<AgentParams>) {
  const { workspaceId } = principalOf(request);
  const agentId = request.params.agentId;
  const definition = await ports.agentDefinition(workspaceId, agentId);
  return agentCardOf(
    `${request.protocol}://${request.host}`,
    agentId,
    definition.version,
    definition.definition,
  );
}

/** The version a request speaks: true for 0.3, false for 1.0, null for one this server does not. */
function isLegacy(request: FastifyRequest, method: unknown): boolean | null {
  const header = request.headers[VERSION_HEADER];
  const version = typeof header === "string" ? header.trim() : "";
  if (version === "") return isLegacyJsonRpcMethod(method);
  if (version === "0.3" || version.startsWith("0.3.")) return true;
  if (version === "1.0" || version === "1" || version.startsWith("1.")) return false;
  return null;
}

/**
 * A streaming method's answer. A failure before its first event (an unknown task, a refused
 * message) is a plain JSON-RPC error; from the first event on it is an SSE stream, which ends
 * when the task comes to rest. The client going away stops the reading, not the task.
 */
async function streamResult(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncGenerator<unknown, void, undefined>,
  options: { pingMs: number; closed: AbortController; errorOf(error: unknown): unknown },
): Promise<void> {
  const { closed, errorOf } = options;
  const iterator = events[Symbol.asyncIterator]();
  let first: IteratorResult<unknown, void>;
  try {
    first = await iterator.next();
  } catch (error) {
    void reply.type("application/json").send(errorOf(error));
    return;
  }
  const firstEvent = first.value as { error?: unknown } | undefined;
  if (first.done || firstEvent?.error !== undefined) {
    void reply.type("application/json").send(firstEvent ?? errorOf(new Error("The stream had no events.")));
    await iterator.return(undefined);
    return;
  }
  const sink = openRpcStream(request, reply, options.pingMs, closed.signal);
  try {
    sink.write(firstEvent);
    for (;;) {
      const next = await iterator.next();
      if (next.done || closed.signal.aborted) break;
      sink.write(next.value);
    }
  } catch (error) {
    // Mid-stream, a failure is the stream's last event (the guard already logged what was ours).
    sink.write(errorOf(error));
  } finally {
    await iterator.return(undefined);
    sink.end();
  }
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === "function";
}
