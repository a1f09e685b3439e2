import type { ChildThreadState, ThreadInputPlan } from "../../coordinator/ports.js";
import { type CommitRow, type FactAppend, type ProjectionColumns, planFactAppend } from "./appendFacts.js";
import { planRunEffects, type RunUpdate } from "./runWrites.js";
import type { Head } from "./sessionHead.js";
import { pendingOf } from "./sessionRows.js";

/**
 * A session's child thread as an input append reads it, in the append's transaction: its row, its
 * head and its active run (never the primary's). Both backends read these rows and turn them into
 * the decision's `ChildThreadState` and the write plan's base here.
 */
export interface ChildThreadRead {
  id: string;
  agent_name: string | null;
  archived_at: number | string | null;
  head: Head | null;
  run: { id: string; state: string; epoch: number } | null;
  openModelRequest: ChildThreadState["openModelRequest"];
}

/** What an input writes on one child thread: its commit row, and one change of its active run. */
export interface ChildThreadWrites {
  threadId: string;
  facts: FactAppend;
  row: CommitRow | null;
  run: RunUpdate | null;
}

/** A child before its first commit (a spawn always writes one): idle, nothing pending, nothing used. */
const CHILD_START: ProjectionColumns = { status: "idle", pending_json: "[]", usage_json: "{}" };

export function childThreadState(read: ChildThreadRead): ChildThreadState {
  return {
    threadId: read.id,
    agentName: read.agent_name ?? "",
    archived: read.archived_at !== null,
    version: read.head?.version ?? 0,
    pending: pendingOf((read.head ?? CHILD_START).pending_json),
    activeRun: read.run,
    openModelRequest: read.openModelRequest,
  };
}

/**
 * The rows the plan's child parts write, each on the child's head as read (`reads`, by thread id):
 * its facts at the versions after that head and the effects on its active run (cancel, resume).
 */
export function planChildThreadWrites(
  sessionId: string,
  plans: readonly ThreadInputPlan[],
  reads: ReadonlyMap<string, ChildThreadRead>,
  now: number,
  traceContext: string | null,
): ChildThreadWrites[] {
  return plans.map((plan) => {
    const read = reads.get(plan.threadId);
    if (!read) throw new Error(`thread ${plan.threadId} was not read for the append`);
    const version = read.head?.version ?? 0;
    const facts = planFactAppend(
      sessionId,
      plan.threadId,
      version,
      plan.facts,
      now,
      read.head ?? CHILD_START,
    );
    const runs = planRunEffects(read.run, plan.effects, sessionId, plan.threadId, now, traceContext);
    return { threadId: plan.threadId, facts, row: facts.row, run: runs.update };
  });
}
