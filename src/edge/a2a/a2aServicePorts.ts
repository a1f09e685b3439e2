import { createHash } from "node:crypto";
import { decodeCommitted } from "../../coordinator/factCodec.js";
import { AwakenError } from "../../kernel/errors.js";
import { credentialLifetime } from "../http/credentialLifetime.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { readTypedHistory, typedTail } from "../http/typedFacts.js";
import type { A2aPorts } from "./a2aPorts.js";

/** How long a message id counts as the same send (a client retrying a request it lost). */
export const RETRY_WINDOW_MS = 10 * 60_000;

/** A fixed-size key for a client's message id (hostile text of any length) under its agent. */
function contextKey(agentId: string, messageId: string): string {
  return createHash("sha256").update(`${agentId}\n${messageId}`).digest("hex");
}

/** The A2A edge's ports over the application services every edge shares. */
export function a2aPortsOf(services: EdgeServices): A2aPorts {
  const { history } = services.stream;
  return {
    async agentDefinition(workspaceId, agentId) {
      const { publication } = await services.agents.retrieve(workspaceId, agentId);
      return { version: publication.version, definition: publication.definition };
    },
    startSession: (workspaceId, agentId, messageId) =>
      messageId
        ? services.entry.openKeyed(
            workspaceId,
            "a2a_message",
            contextKey(agentId, messageId),
            RETRY_WINDOW_MS,
            {
              agent: { id: agentId },
            },
          )
        : services.entry.start({ workspaceId, agent: { id: agentId } }),
    openedBy: (workspaceId, agentId, messageId) =>
      services.entry.findKeyed(workspaceId, "a2a_message", contextKey(agentId, messageId), RETRY_WINDOW_MS),
    async repeatedSend(workspaceId, sessionId, key) {
      const echo = await services.sessions.repeatedSend(workspaceId, sessionId, key, RETRY_WINDOW_MS);
      return echo ? echo.map(decodeCommitted) : null;
    },
    async session(workspaceId, sessionId) {
      try {
        return await services.sessions.get(workspaceId, sessionId);
      } catch (error) {
        if (error instanceof AwakenError && error.category === "not_found") return null;
        throw error;
      }
    },
    async sessions(workspaceId, agentId, limit, cursor) {
      const page = await services.sessions.list(workspaceId, {
        limit,
        cursor,
        order: "desc",
        agentId,
        includeArchived: true,
      });
      return { sessions: page.data, nextCursor: page.nextCursor };
    },
    send: async (workspaceId, sessionId, inputs, dedupe) =>
      (await services.sessions.send(workspaceId, sessionId, inputs, { dedupe })).map(decodeCommitted),
    history: (threadId, afterSeq, upToSeq) => readTypedHistory(history, threadId, afterSeq, upToSeq),
    tail: (session, afterSeq, signal) => typedTail(services.tail, session, afterSeq, signal),
    pingMs: services.stream.pingMs,
    clock: services.clock,
    credentialEnds: (request, open) => credentialLifetime(services, request, open),
    push: services.push ? { ...services.push, now: () => services.clock.now() } : null,
  };
}
