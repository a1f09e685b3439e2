import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import type { A2aPorts, TypedTailItem } from "./a2aPorts.js";

const PAGE = 500;

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
    async history(threadId, afterSeq, upToSeq) {
      const out: CommittedTypedFact[] = [];
      let cursor = afterSeq;
      for (;;) {
        const page = await history.readThread(threadId, cursor, PAGE);
        for (const fact of page) {
          if (upToSeq !== undefined && fact.seq > upToSeq) return out;
          out.push(decodeCommitted(fact));
        }
        if (page.length < PAGE) return out;
        cursor = page.at(-1)!.seq;
      }
    },
    tail: (session, afterSeq, signal) =>
      (async function* (): AsyncGenerator<TypedTailItem> {
        for await (const item of services.tail.open(session, { afterSeq, previews: true, signal })) {
          yield item.kind === "fact" ? { kind: "fact", fact: decodeCommitted(item.fact) } : item;
        }
      })(),
    pingMs: services.stream.pingMs,
  };
}
