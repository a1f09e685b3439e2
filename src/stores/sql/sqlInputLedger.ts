import { sql } from "kysely";
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
import { planFactAppend, rowFacts } from "./appendFacts.js";
import { begin, type Db, type DbOrTx, fromJson, type SqlDialect, type Tx } from "./db.js";
import { lastOfTypes } from "./historyRows.js";
import { readHead } from "./sessionHead.js";
import { deleteSessionResources } from "./sqlSessionResourceStore.js";
import { readHash, storedHash } from "./storedHash.js";

/**
 * `state in (the active states)` as literals: the index of a session's runs holds only its active
 * ones, and a prepared plan can use it only for a condition that names them.
 */
export const ACTIVE_RUN_SQL = sql<boolean>`state in ('queued', 'claimed', 'awaiting')`;

/**
 * What the input ledger does the same way on both backends: the replay of a recent send and the
 * deletion of a session (both rare). `append`, the hot path, is each backend's executor of the
 * one plan (`planInputWrites`): SQLite's synchronous transaction, PostgreSQL's one statement.
 */
export abstract class SqlInputLedger implements InputLedger {
  private readonly rowLocks: boolean;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {
    this.rowLocks = dialect === "postgres";
  }

  abstract append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
  ): Promise<InputOutcome>;

  /** The newest send to the session's thread: its commit row holds the receipt. */
  async lastSend(sessionId: string, requestHash: string, notBefore: number): Promise<SendReceipt | null> {
    const row = await this.db
      .selectFrom("commits as c")
      .innerJoin("sessions as s", "s.thread_id", "c.thread_id")
      .select([
        "c.thread_id",
        "c.base_version",
        "c.session_id",
        "c.facts_json",
        "c.created_at",
        "c.request_hash",
        "c.body_hash",
        "c.echo_json",
      ])
      .where("s.id", "=", sessionId)
      .where("c.request_hash", "is not", null)
      .orderBy("c.base_version", "desc")
      .limit(1)
      .executeTakeFirst();
    if (!row || row.request_hash !== storedHash(requestHash) || Number(row.created_at) < notBefore)
      return null;
    const facts = rowFacts(row);
    const echo = fromJson<number[]>(row.echo_json ?? "[]").flatMap((i) => facts[i] ?? []);
    return { echo, bodyHash: readHash(row.body_hash) };
  }

  async deleteSession(sessionId: string, deletedFact: Fact, now: number): Promise<CommittedFact | null> {
    for (;;) {
      const outcome = await begin(this.db, this.dialect).execute((tx) =>
        this.deleteOnce(tx, sessionId, deletedFact, now),
      );
      if (outcome !== "moved") return outcome;
    }
  }

  /**
   * One attempt: "moved" when a commit took the head version first (nothing is kept; try again).
   * On PostgreSQL the session row and then its active runs are locked first, the order of every
   * input append, so no input lands between the deleted fact and the erasure behind it.
   */
  private async deleteOnce(
    tx: Tx,
    sessionId: string,
    deletedFact: Fact,
    now: number,
  ): Promise<CommittedFact | null | "moved"> {
    const session = await tx
      .selectFrom("sessions")
      .select(["thread_id", "status", "pending_json", "usage_json"])
      .where("id", "=", sessionId)
      .where("deleted_at", "is", null)
      .$if(this.rowLocks, (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!session) return null;
    if (this.rowLocks) {
      await tx
        .selectFrom("runs")
        .select("id")
        .where("session_id", "=", sessionId)
        .where(ACTIVE_RUN_SQL)
        .forUpdate()
        .execute();
    }
    const head = await readHead(tx, session.thread_id);
    const plan = planFactAppend(
      sessionId,
      session.thread_id,
      head?.version ?? 0,
      [deletedFact],
      now,
      head ?? session,
    );
    if (!plan.row) return null;
    const inserted = await tx
      .insertInto("commits")
      .values(plan.row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return "moved";
    // Everything before the deleted fact goes; live tails still find that last fact and close.
    await tx
      .deleteFrom("commits")
      .where("thread_id", "=", session.thread_id)
      .where("base_version", "<", plan.row.base_version)
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
      .where(ACTIVE_RUN_SQL)
      .execute();
    // Its resources go with it, repository tokens (sealed) included.
    await deleteSessionResources(tx, [sessionId]);
    // Its names go too: a client's next use of one starts a new conversation.
    await tx
      .deleteFrom("session_names")
      .where("space", "=", "session")
      .where("target_id", "=", sessionId)
      .execute();
    await tx
      .updateTable("sessions")
      .set({ deleted_at: now, metadata_json: "{}", title: null, resources_json: "[]" })
      .where("id", "=", sessionId)
      .execute();
    return plan.committed[0] ?? null;
  }
}

export const MODEL_REQUEST_TYPES = storedTypesOf("model_request_start", "model_request_end");

/** The request a span start left open (the thread's last span fact), named as it recorded it. */
export function openRequestOf(last: TypedFact): InputContext["openModelRequest"] {
  if (last.kind !== "model_request_start") return null;
  return { startId: last.id, provider: last.provider || "unknown", model: last.model || "unknown" };
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

/** The request the thread's last model request span left open, if any. */
export async function openRequest(db: DbOrTx, threadId: string): Promise<InputContext["openModelRequest"]> {
  let below: number | null = null;
  for (;;) {
    let query = db
      .selectFrom("commits")
      .select(["thread_id", "base_version", "session_id", "facts_json", "created_at"])
      .where("thread_id", "=", threadId);
    if (below !== null) query = query.where("base_version", "<", below);
    const rows = await query.orderBy("base_version", "desc").limit(SPAN_ROWS_PER_READ).execute();
    const last = lastOfTypes(rows, MODEL_REQUEST_TYPES);
    if (last) return openRequestOf(decodeFact(last));
    const oldest = rows.at(-1);
    if (!oldest || rows.length < SPAN_ROWS_PER_READ) return null;
    below = Number(oldest.base_version);
  }
}

/** Commit rows read per round while looking back for the last span. */
const SPAN_ROWS_PER_READ = 16;
