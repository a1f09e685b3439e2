import { decodeFact, storedTypesOf } from "../../coordinator/factCodec.js";
import type { CommittedFact, Fact } from "../../coordinator/facts.js";
import type { TypedFact } from "../../coordinator/factVocabulary.js";
import type {
  AppendPrecondition,
  InputContext,
  InputLedger,
  InputOutcome,
  InputPlan,
  SendReceipt,
} from "../../coordinator/ports.js";
import { type WorkState, workLeaseProblem } from "../../coordinator/workLease.js";
import { notFound } from "../../kernel/errors.js";
import { appendFacts } from "./appendFacts.js";
import { begin, type Db, type DbOrTx, fromJson, type SqlDialect, type Tx } from "./db.js";
import { executeInputWrites } from "./executeWrites.js";
import { planInputWrites } from "./inputWrites.js";
import { rowToSession } from "./sessionRows.js";
import { deleteSessionResources } from "./sqlSessionResourceStore.js";

export const ACTIVE_RUN_STATES = ["queued", "claimed", "awaiting"] as const;

/**
 * Coordinator-authored appends. On PostgreSQL each transaction first locks the session's thread row
 * and then its active run row — the same order as the fenced commit in `sqlDispatchStore.ts` — so
 * `decide` sees a projection, run and version that cannot change before the append, and a
 * concurrent commit waits and then meets a clean `version_conflict` instead of a key collision.
 * The PostgreSQL bundle uses `PostgresInputLedger` (stores/postgres/) for `append`: the same locks in
 * the same order, with fewer statements.
 */
export class SqlInputLedger implements InputLedger {
  private readonly rowLocks: boolean;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect = "sqlite",
  ) {
    this.rowLocks = dialect === "postgres";
  }

  async append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
  ): Promise<InputOutcome> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      if (this.rowLocks) await lockThreadOf(tx, sessionId);
      if (precondition) await this.checkWorkLease(tx, sessionId, precondition, now);
      const row = await tx
        .selectFrom("sessions")
        .selectAll()
        .where("id", "=", sessionId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!row) throw notFound("session", sessionId);
      const session = rowToSession(row);
      const run = await tx
        .selectFrom("runs")
        .select(["id", "state", "epoch"])
        .where("session_id", "=", sessionId)
        .where("state", "in", [...ACTIVE_RUN_STATES])
        .orderBy("created_at", "desc")
        .$if(this.rowLocks, (qb) => qb.forUpdate())
        .executeTakeFirst();
      const activeRun = run ? { id: run.id, state: run.state, epoch: Number(run.epoch) } : null;
      const openModelRequest = run?.state === "claimed" ? await openRequest(tx, session.threadId) : null;
      const plan = decide({ session, activeRun, openModelRequest });
      const thread = await tx
        .selectFrom("threads")
        .select("version")
        .where("id", "=", session.threadId)
        .executeTakeFirstOrThrow();
      const writes = planInputWrites(
        { sessionId, threadId: session.threadId, activeRun },
        row,
        Number(thread.version),
        plan,
        now,
      );
      await executeInputWrites(tx, sessionId, writes);
      const committed = writes.facts.committed;
      return { committed, plan, activeRunId: activeRun?.id ?? null };
    });
  }

  /**
   * The lease a sessions token's send must still hold, read in the append's transaction. On
   * PostgreSQL the item row is share-locked (after the thread row, the ledger's lock order), so no
   * heartbeat, stop or re-delivery can move the lease until this append commits.
   */
  protected async checkWorkLease(
    tx: Tx,
    sessionId: string,
    precondition: AppendPrecondition,
    now: number,
  ): Promise<void> {
    const row = await workLeaseQuery(tx, precondition.workId, this.rowLocks).executeTakeFirst();
    checkWorkLeaseRow(row, precondition, sessionId, now);
  }

  async lastSend(sessionId: string, requestHash: string, notBefore: number): Promise<SendReceipt | null> {
    const row = await this.db
      .selectFrom("send_receipts")
      .select(["request_hash", "response_json", "body_hash"])
      .where("session_id", "=", sessionId)
      .where("created_at", ">=", notBefore)
      .executeTakeFirst();
    if (!row || row.request_hash !== requestHash) return null;
    return { echo: fromJson<CommittedFact[]>(row.response_json), bodyHash: row.body_hash };
  }

  async deleteSession(sessionId: string, deletedFact: Fact, now: number): Promise<CommittedFact | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      if (this.rowLocks) await lockThreadOf(tx, sessionId);
      const session = await tx
        .selectFrom("sessions")
        .select(["thread_id"])
        .where("id", "=", sessionId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!session) return null;
      const thread = await tx
        .selectFrom("threads")
        .select("version")
        .where("id", "=", session.thread_id)
        .executeTakeFirstOrThrow();
      const [committed] = await appendFacts(
        tx,
        sessionId,
        session.thread_id,
        Number(thread.version),
        [deletedFact],
        now,
      );
      await tx
        .deleteFrom("events")
        .where("thread_id", "=", session.thread_id)
        .where("id", "!=", deletedFact.id)
        .execute();
      await tx
        .updateTable("runs")
        .set((eb) => ({
          state: "cancelled",
          epoch: eb("epoch", "+", 1),
          owner: null,
          lease_expires_at: null,
          updated_at: now,
        }))
        .where("session_id", "=", sessionId)
        .where("state", "in", [...ACTIVE_RUN_STATES])
        .execute();
      await tx.deleteFrom("send_receipts").where("session_id", "=", sessionId).execute();
      // Its resources go with it, repository tokens (sealed) included.
      await deleteSessionResources(tx, [sessionId]);
      // Its names go too: a client's next use of one starts a new conversation.
      await tx
        .deleteFrom("session_names")
        .where("space", "=", "session")
        .where("target_id", "=", sessionId)
        .execute();
      await tx
        .deleteFrom("commit_operations")
        .where("run_id", "in", (eb) => eb.selectFrom("runs").select("id").where("session_id", "=", sessionId))
        .execute();
      await tx
        .updateTable("sessions")
        .set({ deleted_at: now, metadata_json: "{}", title: null, resources_json: "[]" })
        .where("id", "=", sessionId)
        .execute();
      return committed ?? null;
    });
  }
}

/**
 * PostgreSQL: locks the session's thread row (a thread belongs to one session for life). Every
 * append to a thread holds this lock until it commits, so the append path is serialised per thread.
 */
async function lockThreadOf(tx: Tx, sessionId: string): Promise<void> {
  await tx
    .selectFrom("threads")
    .select("id")
    .where("id", "=", (eb) => eb.selectFrom("sessions").select("thread_id").where("id", "=", sessionId))
    .forUpdate()
    .execute();
}

/** The last model request span of the thread, if it was started and not ended. */
export async function openRequest(tx: Tx, threadId: string): Promise<InputContext["openModelRequest"]> {
  return openRequestFrom(await openRequestQuery(tx, threadId).executeTakeFirst());
}

export const MODEL_REQUEST_TYPES = storedTypesOf("model_request_start", "model_request_end");

/** The request a span start left open (the thread's last span fact), named as it recorded it. */
export function openRequestOf(last: TypedFact): InputContext["openModelRequest"] {
  if (last.kind !== "model_request_start") return null;
  return { startId: last.id, provider: last.provider || "unknown", model: last.model || "unknown" };
}

/** The thread's last model request span event (start or end). */
export function openRequestQuery(db: DbOrTx, threadId: string) {
  return db
    .selectFrom("events")
    .select(["id", "type", "body_json"])
    .where("thread_id", "=", threadId)
    .where("type", "in", MODEL_REQUEST_TYPES)
    .orderBy("seq", "desc")
    .limit(1);
}

export function openRequestFrom(
  last: { id: string; type: string; body_json: string } | undefined,
): InputContext["openModelRequest"] {
  if (!last) return null;
  return openRequestOf(decodeFact({ id: last.id, type: last.type, body: fromJson(last.body_json) }));
}

/** The work item a sessions token's send depends on; share-locked on PostgreSQL. */
export function workLeaseQuery(db: DbOrTx, workId: string, rowLocks: boolean) {
  return db
    .selectFrom("work_items")
    .select(["session_id", "state", "epoch", "lease_expires_at"])
    .where("id", "=", workId)
    .$if(rowLocks, (qb) => qb.forShare());
}

/** Throws the precondition's problem (the lease lapsed, another delivery, …), if any. */
export function checkWorkLeaseRow(
  row: { session_id: string; state: string; epoch: number; lease_expires_at: number | null } | undefined,
  precondition: AppendPrecondition,
  sessionId: string,
  now: number,
): void {
  const problem = workLeaseProblem(
    row && {
      sessionId: row.session_id,
      state: row.state as WorkState,
      epoch: Number(row.epoch),
      leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    },
    precondition,
    sessionId,
    now,
  );
  if (problem) throw problem;
}
