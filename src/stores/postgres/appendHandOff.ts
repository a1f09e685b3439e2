import type { CommittedFact } from "../../coordinator/facts.js";
import type { Activation } from "../../coordinator/ports.js";
import { activationFromRows } from "../sql/activationRows.js";
import { rowFacts } from "../sql/appendFacts.js";
import type { InputWrites } from "../sql/inputWrites.js";
import { planClaim, type RunEffectWrites } from "../sql/runWrites.js";
import type { InputRead } from "./inputReadCache.js";

/** What an append knows, from this process's own writes, of the session it appends to. */
export interface KnownSession {
  read: InputRead;
  /** The thread's committed facts up to the read's head, in order. */
  history: readonly CommittedFact[];
  /** The pinned environment revision's config as stored (revisions never change). */
  environmentConfigJson: string;
}

/** An append's writes with the run it starts or resumes claimed for an idle slot. */
export interface HandOffPlan {
  runId: string;
  runs: RunEffectWrites;
  /** The resumed run's crash count the claim assumes (0); the statement locks it only so. */
  resumesCrashFree: boolean;
  /** The session had no resources (as known): the statement checks none was added since. */
  checkNoResources: boolean;
  /** What the slot runs: the activation a claim statement would return for this run. */
  activation: Activation;
}

/**
 * The claim an append can make in its own statement, for `owner`: its writes start or resume
 * exactly one run of the session's own thread, and append facts (so the statement checks the head
 * the known history ends at). Null otherwise: the run is queued for a claim as always. The claim is
 * `planClaim`'s (epoch + 1, a lease, no crash counted: the run was not claimed), and the activation
 * is built from the rows a claim reads, here known: the session row and head this process wrote,
 * the thread's facts it committed, the revision's config a claim returned.
 */
export function planHandOff(
  known: KnownSession,
  writes: InputWrites,
  activeRun: { id: string; state: string; epoch: number } | null,
  owner: string,
  leaseMs: number,
  now: number,
): HandOffPlan | null {
  const { read } = known;
  const row = writes.row;
  if (!row || writes.session) return null;
  const version = Number(read.head_version ?? 0);
  const ends = known.history.at(-1)?.seq ?? 0;
  if (ends !== version || row.base_version !== version) return null;
  const { inserts, update } = writes.runs;
  const leaseExpiresAt = now + leaseMs;
  let claimed: { runs: RunEffectWrites; runId: string; epoch: number; traceContext: string | null };
  if (inserts.length === 1 && update === null) {
    const [run] = inserts;
    if (run?.state !== "queued" || run.thread_id !== read.thread_id) return null;
    const claim = planClaim(run, owner, leaseExpiresAt, now);
    claimed = {
      runs: { inserts: [{ ...run, ...claim.update.set }], update: null },
      runId: run.id,
      epoch: claim.epoch,
      traceContext: run.trace_context,
    };
  } else if (inserts.length === 0 && update && activeRun && update.id === activeRun.id) {
    if (update.set.state !== "queued" || activeRun.state !== "awaiting") return null;
    const claim = planClaim({ ...activeRun, crash_count: 0 }, owner, leaseExpiresAt, now);
    claimed = {
      runs: { inserts: [], update: { ...update, set: { ...update.set, ...claim.update.set } } },
      runId: activeRun.id,
      epoch: claim.epoch,
      traceContext: update.set.trace_context ?? null,
    };
  } else return null;
  const activation = activationFromRows(
    {
      runId: claimed.runId,
      sessionId: read.id,
      threadId: read.thread_id,
      owner,
      epoch: claimed.epoch,
      leaseExpiresAt,
      crashCount: 0,
      claimableSince: now,
      reclaimed: false,
      traceContext: claimed.traceContext,
    },
    {
      workspace_id: read.workspace_id,
      agent_snapshot_json: read.agent_snapshot,
      environment_id: read.environment_id,
      environment_revision: Number(read.environment_revision),
      metadata_json: read.metadata_json,
      data_subject: read.data_subject,
      budget_json: read.budget_json,
      has_resources: read.has_resources,
    },
    known.environmentConfigJson,
    [...known.history, ...rowFacts(row)],
  );
  return {
    runId: claimed.runId,
    runs: claimed.runs,
    resumesCrashFree: claimed.runs.update !== null,
    checkNoResources: !read.has_resources,
    activation,
  };
}
