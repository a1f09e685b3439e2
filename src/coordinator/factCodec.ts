import { type CompactionFact, compactionDecoders, encodeCompaction } from "./facts/compactionCodec.js";
import { encodeMessage, type MessageFact, messageDecoders } from "./facts/messageCodec.js";
import { encodeOutcome, type OutcomeFact, outcomeDecoders } from "./facts/outcomeCodec.js";
import { encodeSession, type SessionFact, sessionDecoders } from "./facts/sessionCodec.js";
import { INTERNAL_PREFIX, STORED_TYPE } from "./facts/storedTypes.js";
import { encodeThread, type ThreadFact, threadDecoders } from "./facts/threadCodec.js";
import { encodeTool, type ToolFact, toolDecoders } from "./facts/toolCodec.js";
import { encodeWorkflow, type WorkflowFact, workflowDecoders } from "./facts/workflowCodec.js";
import type { CommittedFact, Fact } from "./facts.js";
import type { CommittedTypedFact, TypedFact } from "./factVocabulary.js";

/**
 * The one place that knows how facts are stored. Everything else reads and builds `TypedFact`s;
 * stores keep the rows exactly as they have always been written, so committed history (its ids,
 * types and bodies) never changes. `encodeFact(decodeFact(f))` equals `f` for every stored shape.
 */

// A Map, not an object: a stored type read from a row is a fresh string, and a keyed lookup on an
// object has to find its interned twin first (for `hasOwn` and then again for the read).
const DECODERS: ReadonlyMap<string, (f: Fact) => TypedFact> = new Map(
  Object.entries({
    ...messageDecoders,
    ...toolDecoders,
    ...sessionDecoders,
    ...threadDecoders,
    ...outcomeDecoders,
    ...compactionDecoders,
    ...workflowDecoders,
  }),
);

export function decodeFact(fact: Fact): TypedFact {
  if (fact.type.startsWith(INTERNAL_PREFIX))
    return { id: fact.id, kind: "internal", type: fact.type, body: fact.body };
  const decode = DECODERS.get(fact.type);
  return decode ? decode(fact) : { id: fact.id, kind: "unknown", type: fact.type, body: fact.body };
}

export function decodeCommitted(fact: CommittedFact): CommittedTypedFact {
  // Every decoder builds a fresh object: the committed fields go onto it instead of into a copy.
  return Object.assign(decodeFact(fact), {
    sessionId: fact.sessionId,
    threadId: fact.threadId,
    seq: fact.seq,
    createdAt: fact.createdAt,
  });
}

export function encodeFact(fact: TypedFact): Fact {
  switch (fact.kind) {
    case "internal":
    case "unknown":
      return { id: fact.id, type: fact.type, body: fact.body };
    case "user_message":
    case "system_message":
    case "agent_message":
    case "agent_thinking":
    case "interrupt":
      return encodeMessage(fact as MessageFact);
    case "tool_call":
    case "tool_result":
    case "tool_confirmation":
    case "thread_ask":
      return encodeTool(fact as ToolFact);
    case "thread_created":
    case "thread_status":
    case "thread_message_sent":
    case "thread_message_received":
      return encodeThread(fact as ThreadFact);
    case "outcome_defined":
    case "outcome_evaluation_start":
    case "outcome_evaluation_ongoing":
    case "outcome_evaluation_end":
      return encodeOutcome(fact as OutcomeFact);
    case "context_compacted":
      return encodeCompaction(fact as CompactionFact);
    case "workflow_run":
      return encodeWorkflow(fact as WorkflowFact);
    default:
      return encodeSession(fact as SessionFact);
  }
}

// Internal facts' builders and readers (runtime bookkeeping: resume tickets, tool intents).
export {
  readToolAwaits,
  readToolExecution,
  TOOL_AWAITS,
  TOOL_EXECUTION,
  type ToolAwaits,
  toolAwaitsFact,
  toolExecutionFact,
} from "./facts/internalFacts.js";

/** Stored types of kinds with one stored type, for stores that filter rows by type in SQL. */
export function storedTypesOf(...kinds: Array<keyof typeof STORED_TYPE>): string[] {
  return kinds.map((kind) => STORED_TYPE[kind]);
}
