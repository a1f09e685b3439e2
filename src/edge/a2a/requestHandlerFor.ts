import type { AgentCard } from "@a2a-js/sdk";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "../http/auth.js";
import { onReplyClosed } from "../http/closeListener.js";
import type { A2aPorts } from "./a2aPorts.js";
import { agentCardOf } from "./agentCard.js";
import { guarded } from "./guardedHandler.js";
import { TaskRequestHandler } from "./taskRequestHandler.js";

export type AgentParams = { Params: { agentId: string } };

/** The card of the agent a request addresses, as this server's public address names it. */
export async function cardFor(ports: A2aPorts, request: FastifyRequest<AgentParams>): Promise<AgentCard> {
  const { workspaceId } = principalOf(request);
  const agentId = request.params.agentId;
  const definition = await ports.agentDefinition(workspaceId, agentId);
  return agentCardOf(
    `${request.protocol}://${request.host}`,
    agentId,
    definition.version,
    definition.definition,
    ports.push !== null,
  );
}

/**
 * The request handler one A2A request is answered by, whichever binding carries it: bound to the
 * key's workspace and the addressed agent, guarded so that only protocol errors leave it. `closed`
 * aborts when the client goes away, or when the credential expires or is revoked (live reads stop,
 * so a stream ends; the task runs on).
 */
export function requestHandlerFor(
  ports: A2aPorts,
  request: FastifyRequest<AgentParams>,
  reply: FastifyReply,
  card: AgentCard,
): { handler: A2ARequestHandler; closed: AbortController } {
  const closed = new AbortController();
  const answered = new AbortController();
  onReplyClosed(reply, "a2a request", () => {
    answered.abort();
    if (!reply.raw.writableFinished) closed.abort();
  });
  ports.credentialEnds(request, answered.signal).addEventListener("abort", () => closed.abort());
  const handler = guarded(
    new TaskRequestHandler(ports, {
      workspaceId: principalOf(request).workspaceId,
      agentId: request.params.agentId,
      card,
      closed: closed.signal,
    }),
    request.id,
    (error) => request.log.error({ err: error }, "a2a request failed"),
  );
  return { handler, closed };
}
