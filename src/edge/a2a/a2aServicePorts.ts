import { decodeCommitted } from "../../coordinator/factCodec.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { readTypedHistory, typedTail } from "../http/typedFacts.js";
import type { A2aPorts } from "./a2aPorts.js";

/** The A2A edge's ports over the application services every edge shares. */
export function a2aPortsOf(services: EdgeServices): A2aPorts {
  const { history } = services.stream;
  return {
    async agentDefinition(workspaceId, agentId) {
      const { publication } = await services.agents.retrieve(workspaceId, agentId);
      return { version: publication.version, definition: publication.definition };
    },
    startSession: (workspaceId, agentId) => services.entry.start({ workspaceId, agent: { id: agentId } }),
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
    push: services.push ? { ...services.push, now: () => services.clock.now() } : null,
  };
}
