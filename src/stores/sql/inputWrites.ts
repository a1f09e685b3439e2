import type { InputContext, InputPlan, SessionPatch } from "../../coordinator/ports.js";
import { type FactAppend, type ProjectionColumns, planFactAppend } from "./appendFacts.js";
import { toJson } from "./db.js";
import { planRunEffects, type RunEffectWrites } from "./runWrites.js";
import type { Database } from "./schema.js";

export type SessionChange = Partial<
  Pick<
    Database["sessions"],
    | "status"
    | "pending_json"
    | "usage_json"
    | "title"
    | "metadata_json"
    | "budget_json"
    | "archived_at"
    | "updated_at"
  >
>;

/** What one input append writes, in this order: facts, session row, runs, send receipt. */
export interface InputWrites {
  facts: FactAppend;
  /** One UPDATE of the session row: the projection after the facts merged with the plan's patch. */
  session: SessionChange | null;
  runs: RunEffectWrites;
  /** The send receipt, upserted (a session keeps only its most recent one). */
  receipt: Database["send_receipts"] | null;
}

/**
 * Everything `plan` (decided on `ctx`) writes, as rows and changes every backend executes. `seen`
 * is the session row's projection and `version` the thread's, both read under the append's locks.
 */
export function planInputWrites(
  ctx: Pick<InputContext, "activeRun"> & { sessionId: string; threadId: string },
  seen: ProjectionColumns,
  version: number,
  plan: InputPlan,
  now: number,
): InputWrites {
  const facts = planFactAppend(ctx.sessionId, ctx.threadId, version, plan.facts, now, seen);
  const patch = plan.sessionPatch;
  const session: SessionChange | null =
    facts.version || patch
      ? { ...(facts.version ? facts.after : {}), ...(patch ? patchColumns(patch) : {}), updated_at: now }
      : null;
  const receipt: Database["send_receipts"] | null = plan.requestHash
    ? {
        session_id: ctx.sessionId,
        request_hash: plan.requestHash,
        response_json: toJson(facts.committed.filter((f) => plan.echoIds.includes(f.id))),
        created_at: now,
        body_hash: plan.bodyHash ?? null,
      }
    : null;
  return {
    facts,
    session,
    runs: planRunEffects(
      ctx.activeRun,
      plan.effects,
      ctx.sessionId,
      ctx.threadId,
      now,
      plan.traceContext ?? null,
    ),
    receipt,
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
