import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { EdgeServices } from "../http/edgeServices.js";
import type { AgUiPorts, TypedTailItem } from "./agUiPorts.js";

const PAGE = 500;

/** The AG-UI edge's ports over the application services every edge shares. */
export function agUiPortsOf(services: EdgeServices): AgUiPorts {
  const { history } = services.stream;
  return {
    agentDefinition: async (workspaceId, agentId) =>
      (await services.agents.retrieve(workspaceId, agentId)).publication.definition,
    entry: services.entry,
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
    threadVersion: (threadId) => history.threadVersion(threadId),
    tail: (session, afterSeq, signal) =>
      (async function* (): AsyncGenerator<TypedTailItem> {
        for await (const item of services.tail.open(session, { afterSeq, previews: true, signal })) {
          yield item.kind === "fact" ? { kind: "fact", fact: decodeCommitted(item.fact) } : item;
        }
      })(),
    pingMs: services.stream.pingMs,
  };
}
