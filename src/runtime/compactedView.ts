/**
 * The model's view of a thread: its committed history, or, once the history was compacted, the
 * latest compaction's summary plus the facts committed after the compaction's boundary. The
 * committed history never changes; only what the model is sent does. Everything here is decided
 * from committed facts alone, so every worker rebuilds the same view.
 */

import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import type { ModelMessage } from "../providers/ports.js";
import { estimateMessageTokens } from "../providers/tokenEstimate.js";
import { buildConversation } from "./conversation.js";

export interface ModelView {
  /** The latest compaction's summary; null when the thread was never compacted. */
  summary: string | null;
  /** The last thread version the summary replaces (0: none). */
  throughSeq: number;
  /** The committed facts after the boundary: what the model reads besides the summary. */
  facts: CommittedTypedFact[];
}

/**
 * Compactions in a row without the model answering (a message or a tool call) that a turn may make
 * before it ends with `compaction_limit_reached_error`.
 */
export const MAX_COMPACTIONS_IN_A_ROW = 3;

/** The view the latest committed compaction leaves (each summary retells the one before it). */
export function modelView(facts: readonly CommittedTypedFact[]): ModelView {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind !== "context_compacted") continue;
    return {
      summary: fact.summary,
      throughSeq: fact.throughSeq,
      facts: facts.filter((f) => f.seq > fact.throughSeq),
    };
  }
  return { summary: null, throughSeq: 0, facts: [...facts] };
}

/** The conversation the model is sent for a view. */
export function viewConversation(view: ModelView): ModelMessage[] {
  return buildConversation(view.facts, view.summary);
}

/**
 * Compactions committed since the model last answered, since the turn began or since an interrupt:
 * the count the compaction limit applies to.
 */
export function compactionsInARow(facts: readonly CommittedTypedFact[]): number {
  let count = 0;
  for (const fact of facts) {
    if (fact.kind === "context_compacted") count += 1;
    else if (
      (fact.kind === "model_request_end" && !fact.isError) ||
      fact.kind === "status_idle" ||
      fact.kind === "interrupt"
    )
      count = 0;
  }
  return count;
}

/**
 * Where the next compaction cuts the view: the thread version through which facts are summarized.
 * The kept facts are the newest that fit `keepTokens` (estimated as the model would be sent them),
 * cut only where the model's view stays well formed: no tool call summarized without its result,
 * no model request split, no kept request that had not seen a summarized fact. When even the newest
 * fact does not fit, everything is summarized. Null: the view holds no fact to summarize.
 */
export function compactionCut(view: ModelView, keepTokens: number): number | null {
  const cuts = validCuts(view.facts);
  if (cuts.length === 0) return null;
  // The kept part only shrinks as the cut moves later: the earliest cut whose rest fits wins.
  let low = 0;
  let high = cuts.length - 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const cut = cuts[middle] as number;
    const kept = buildConversation(view.facts.filter((f) => f.seq > cut));
    if (estimateMessageTokens(kept) <= keepTokens) high = middle;
    else low = middle + 1;
  }
  return cuts[low] ?? null;
}

/** The versions after which the view may be cut, ascending. */
function validCuts(facts: readonly CommittedTypedFact[]): number[] {
  // The earliest version a later request had not seen: no cut may fall at or after it.
  const unseenFrom: number[] = new Array(facts.length + 1).fill(Number.POSITIVE_INFINITY);
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i] as CommittedTypedFact;
    const seen = fact.kind === "model_request_start" ? fact.contextSeq : undefined;
    unseenFrom[i] = Math.min(unseenFrom[i + 1] as number, seen === undefined ? Infinity : seen + 1);
  }
  const cuts: number[] = [];
  const openCalls = new Set<string>();
  const openRequests = new Set<string>();
  for (const [i, fact] of facts.entries()) {
    switch (fact.kind) {
      case "tool_call":
        openCalls.add(fact.id);
        break;
      case "tool_result":
        openCalls.delete(fact.callId);
        break;
      case "interrupt":
        openCalls.clear();
        break;
      case "model_request_start":
        openRequests.add(fact.id);
        break;
      case "model_request_end":
        openRequests.delete(fact.startId);
        break;
    }
    const laterUnseen = unseenFrom[i + 1] as number;
    if (openCalls.size === 0 && openRequests.size === 0 && fact.seq < laterUnseen) cuts.push(fact.seq);
  }
  return cuts;
}
