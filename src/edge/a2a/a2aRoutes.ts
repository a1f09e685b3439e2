import { AgentCard } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { writeRpcError } from "./a2aErrors.js";
import type { A2aPorts } from "./a2aPorts.js";
import { a2aRestRoutes } from "./a2aRestRoutes.js";
import { type AgentParams, cardFor, requestHandlerFor } from "./requestHandlerFor.js";
import { answerWithSse } from "./sseAnswer.js";

const VERSION_HEADER = "a2a-version";
const ROUTE = "/v1/a2a/agents/:agentId";
const CARD_MAX_AGE_S = 60;

/**
 * The A2A edge: each agent's card, and its JSON-RPC interface, where protocol 1.0 and 0.3 peers
 * share one URL. The `A2A-Version` header chooses the version; without one, the method name does
 * (`message/send` is 0.3, `SendMessage` 1.0). The SDK's transports parse and shape the wire; the
 * request handler answers over the session service.
 */
export function a2aRoutes(app: FastifyInstance, portsFor: (request: FastifyRequest) => A2aPorts): void {
  app.get<AgentParams>(`${ROUTE}/.well-known/agent-card.json`, async (request, reply) => {
    // Ports narrowed to the caller's scope: an agent or task outside it is not found.
    const ports = portsFor(request);
    const card = await cardFor(ports, request);
    void reply
      .header("cache-control", `private, max-age=${CARD_MAX_AGE_S}`)
      .type("application/json")
      .send(AgentCard.toJSON(card));
  });

  app.post<AgentParams>(ROUTE, async (request, reply) => {
    const ports = portsFor(request);
    const body = request.body as { method?: unknown; id?: unknown } | undefined;
    const legacy = isLegacy(request, body?.method);
    if (legacy === null) {
      writeRpcError(reply, body?.id, -32009, "This agent speaks A2A protocol 1.0 and 0.3.");
      return;
    }
    const card = await cardFor(ports, request);
    const { handler, closed } = requestHandlerFor(ports, request, reply, card);
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
    const envelopeOf = (error: unknown) => ({ jsonrpc: "2.0", id, error: toError(error) });
    await answerWithSse(request, reply, result, {
      pingMs: ports.pingMs,
      clock: ports.clock,
      closed,
      encode: (event) => event,
      // The transport yields a refusal as an error envelope; a throw becomes one here.
      isRefusal: (first) => (first as { error?: unknown } | undefined)?.error !== undefined,
      refuse: (r, failure) => {
        const envelope =
          (failure as { error?: unknown } | undefined)?.error !== undefined ? failure : envelopeOf(failure);
        void r.type("application/json").send(envelope);
      },
      failure: (error) => ({ data: envelopeOf(error) }),
    });
  });
  a2aRestRoutes(app, portsFor);
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

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === "function";
}
