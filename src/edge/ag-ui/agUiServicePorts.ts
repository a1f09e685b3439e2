import { decodeCommitted } from "../../coordinator/factCodec.js";
import { childAsksPending } from "../http/childAsks.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { readTypedHistory, typedTail } from "../http/typedFacts.js";
import type { AgUiPorts } from "./agUiPorts.js";

/** The AG-UI edge's ports over the application services every edge shares. */
export function agUiPortsOf(services: EdgeServices): AgUiPorts {
  const { history } = services.stream;
  return {
    agentDefinition: async (workspaceId, agentId) =>
      (await services.agents.retrieve(workspaceId, agentId)).publication.definition,
    entry: services.entry,
    send: async (workspaceId, sessionId, inputs, dedupe) =>
      (await services.sessions.send(workspaceId, sessionId, inputs, { dedupe })).map(decodeCommitted),
    history: (threadId, afterSeq, upToSeq) => readTypedHistory(history, threadId, afterSeq, upToSeq),
    threadVersion: (threadId) => history.threadVersion(threadId),
    childAsks: (session, facts) => childAsksPending(services.sessions, session, facts),
    tail: (session, afterSeq, signal) => typedTail(services.tail, session, afterSeq, signal),
    pingMs: services.stream.pingMs,
  };
}
