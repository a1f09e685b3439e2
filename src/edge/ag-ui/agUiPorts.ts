import type { AgentDefinition } from "../../control/agentDefinition.js";
import type { DomainInput, SendDedupe } from "../../coordinator/domainInputs.js";
import type { PendingAction } from "../../coordinator/facts.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { SessionEntry } from "../../coordinator/sessionEntry.js";

import type { TypedTailItem } from "../http/typedFacts.js";

export type { TypedTailItem };

/**
 * What one AG-UI run needs from the application services, narrowed to this edge's use and with
 * committed facts already decoded to the product's vocabulary.
 */
export interface AgUiPorts {
  /** The agent's latest definition; throws not_found for an agent this workspace does not have. */
  agentDefinition(workspaceId: string, agentId: string): Promise<AgentDefinition>;
  entry: Pick<SessionEntry, "findNamed" | "openNamed">;
  /** Enters inputs; returns the committed echo facts. */
  send(
    workspaceId: string,
    sessionId: string,
    inputs: DomainInput[],
    dedupe?: SendDedupe,
  ): Promise<CommittedTypedFact[]>;
  /** Committed facts with `afterSeq < seq <= upToSeq` (to the end when `upToSeq` is absent). */
  history(threadId: string, afterSeq: number, upToSeq?: number): Promise<CommittedTypedFact[]>;
  threadVersion(threadId: string): Promise<number>;
  /** What the session's subagents wait for from the client, when `facts` cross-posted any asks. */
  childAsks(session: SessionRecord, facts: readonly CommittedTypedFact[]): Promise<PendingAction[]>;
  /** The session's tail from `afterSeq`, with previews. Ends when `signal` aborts. */
  tail(session: SessionRecord, afterSeq: number, signal: AbortSignal): AsyncIterable<TypedTailItem>;
  /** Keep-alive interval of open streams. */
  pingMs: number;
}
