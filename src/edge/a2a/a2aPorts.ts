import type { FastifyRequest } from "fastify";
import type { AgentDefinition } from "../../control/agentDefinition.js";
import type { DomainInput, SendDedupe } from "../../coordinator/domainInputs.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";

import type { TypedTailItem } from "../http/typedFacts.js";
import type { A2aPush } from "./push/pushConfigs.js";

export type { TypedTailItem };

/**
 * What the A2A edge needs from the application services, narrowed to its use and with committed
 * facts decoded to the product's vocabulary. Tasks are read from these facts; nothing else is kept.
 */
export interface A2aPorts {
  /** The agent's active version; throws not_found for an agent this workspace does not have. */
  agentDefinition(
    workspaceId: string,
    agentId: string,
  ): Promise<{ version: number; definition: AgentDefinition }>;
  /**
   * A new session of the agent in the workspace's default environment (a new context). With a
   * message id, the session that message already opened within the retry window, if any.
   */
  startSession(workspaceId: string, agentId: string, messageId?: string): Promise<SessionRecord>;
  /** The session a message id opened as a new context within the retry window, or null. */
  openedBy(workspaceId: string, agentId: string, messageId: string): Promise<SessionRecord | null>;
  /** The echo of the session's last send when it was made under `key` within the retry window. */
  repeatedSend(workspaceId: string, sessionId: string, key: string): Promise<CommittedTypedFact[] | null>;
  /** The session, or null when this workspace has none by that id. */
  session(workspaceId: string, sessionId: string): Promise<SessionRecord | null>;
  /** The agent's sessions, newest first, a page at a time. */
  sessions(
    workspaceId: string,
    agentId: string,
    limit: number,
    cursor: string | null,
  ): Promise<{ sessions: SessionRecord[]; nextCursor: string | null }>;
  /** Enters inputs; returns the committed echo facts. */
  send(
    workspaceId: string,
    sessionId: string,
    inputs: DomainInput[],
    dedupe?: SendDedupe,
  ): Promise<CommittedTypedFact[]>;
  /** Committed facts with `afterSeq < seq <= upToSeq` (to the end when `upToSeq` is absent). */
  history(threadId: string, afterSeq: number, upToSeq?: number): Promise<CommittedTypedFact[]>;
  /** The session's tail after `afterSeq`, with previews. Ends when `signal` aborts. */
  tail(session: SessionRecord, afterSeq: number, signal: AbortSignal): AsyncIterable<TypedTailItem>;
  /** Keep-alive interval of open streams. */
  pingMs: number;
  /** The clock their keep-alives run on. */
  clock: Clock;
  /**
   * A signal that aborts when the request's credential expires or is revoked; its checks stop when
   * `open` aborts (the response closed).
   */
  credentialEnds(request: FastifyRequest, open: AbortSignal): AbortSignal;
  /** Push notifications; null when this server was built without them (the card says so). */
  push: A2aPush | null;
}
