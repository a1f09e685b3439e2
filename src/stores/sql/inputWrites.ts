import type { InputContext, InputPlan, SessionPatch } from "../../coordinator/ports.js";
import { type CommitRow, type FactAppend, type ProjectionColumns, planFactAppend } from "./appendFacts.js";
import { type ChildThreadRead, type ChildThreadWrites, planChildThreadWrites } from "./childThreadWrites.js";
import { toJson } from "./db.js";
import { planRunEffects, type RunEffectWrites } from "./runWrites.js";
import type { Database } from "./schema.js";
import { storedHash } from "./storedHash.js";

/** The session columns an input's patch changes (the projection lives in `commits`). */
export type SessionChange = Partial<
  Pick<Database["sessions"], "title" | "metadata_json" | "budget_json" | "archived_at" | "updated_at">
>;

/** What one input append writes: its commit row, the session patch, the runs. */
export interface InputWrites {
  facts: FactAppend;
  /** The commit's row, with the send's receipt when the plan names a request; null without facts. */
  row: CommitRow | null;
  /** One UPDATE of the session row: the plan's patch; null without one. */
  session: SessionChange | null;
  runs: RunEffectWrites;
  /** What the input writes on the session's child threads (`InputPlan.threads`), when it does. */
  threads?: ChildThreadWrites[];
}

/**
 * Everything `plan` (decided on `ctx`) writes, as rows and changes every backend executes. `seen`
 * is the thread's projection at `version`, its head when the decision read it.
 */
export function planInputWrites(
  ctx: Pick<InputContext, "activeRun"> & { sessionId: string; threadId: string },
  seen: ProjectionColumns,
  version: number,
  plan: InputPlan,
  now: number,
  /** The child threads as read, when the plan writes on them. */
  children: ReadonlyMap<string, ChildThreadRead> = new Map(),
): InputWrites {
  const facts = planFactAppend(ctx.sessionId, ctx.threadId, version, plan.facts, now, seen);
  const patch = plan.sessionPatch;
  // A send's receipt rides on its commit: a send that appends nothing has nothing to replay, and
  // one whose echo is on a child's history is not replayed from the primary's row.
  const echoedHere = plan.echoIds.every((id) => facts.committed.some((f) => f.id === id));
  const row: CommitRow | null =
    facts.row && plan.requestHash && echoedHere
      ? {
          ...facts.row,
          request_hash: storedHash(plan.requestHash),
          body_hash: storedHash(plan.bodyHash ?? null),
          // The echoed facts by their place in the row: the ids are there already.
          echo_json: toJson(facts.committed.flatMap((f, i) => (plan.echoIds.includes(f.id) ? [i] : []))),
        }
      : facts.row;
  return {
    facts,
    row,
    session: patch ? { ...patchColumns(patch), updated_at: now } : null,
    runs: planRunEffects(
      ctx.activeRun,
      plan.effects,
      ctx.sessionId,
      ctx.threadId,
      now,
      plan.traceContext ?? null,
    ),
    ...(plan.threads
      ? {
          threads: planChildThreadWrites(
            ctx.sessionId,
            plan.threads,
            children,
            now,
            plan.traceContext ?? null,
          ),
        }
      : {}),
  };
}

function patchColumns(patch: SessionPatch): SessionChange {
  return {
    ...(patch.title !== undefined ? { title: patch.title } : {}),
    ...(patch.metadata !== undefined ? { metadata_json: toJson(patch.metadata) } : {}),
    ...(patch.budget !== undefined
      ? { budget_json: patch.budget === null ? null : toJson(patch.budget) }
      : {}),
    ...(patch.archivedAt !== undefined ? { archived_at: patch.archivedAt } : {}),
  };
}

/** Whether an input's writes change anything at all. */
export function writesSomething(writes: InputWrites): boolean {
  return (
    writes.row !== null ||
    writes.session !== null ||
    writes.runs.inserts.length > 0 ||
    writes.runs.update !== null ||
    (writes.threads ?? []).some((t) => t.row !== null || t.run !== null)
  );
}
