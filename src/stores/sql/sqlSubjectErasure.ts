import { sql } from "kysely";
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import {
  type ErasureCounts,
  type ErasureReceipt,
  type ErasureVacuum,
  type ErasureVacuumOutcome,
  type SubjectErasureStore,
  subjectBusy,
  tombstoneStored,
} from "../../coordinator/dataSubjects.js";
import { decodeFacts, encodeFacts } from "./appendFacts.js";
import { begin, type Db, fromJson, type SqlDialect, type Tx, toJson } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";
import { deleteSessionResources } from "./sqlSessionResourceStore.js";

/** The tables an erasure rewrites or deletes from: their old row versions hold the content. */
const ERASED_TABLES = ["commits", "sessions", "push_outbox", "session_resources"] as const;
const VACUUM_LOCK_TIMEOUT = "5s";

/**
 * The Coordinator's erasure adapter. One transaction for the whole subject: the receipt then states
 * exactly what one atomic change removed, and a refusal (a run executing) leaves nothing half
 * erased. On PostgreSQL the subject's session rows are locked first, so an input being appended to
 * one of them lands either before the erasure (and is erased) or after it.
 */
export class SqlSubjectErasure implements SubjectErasureStore {
  private readonly rowLocks: boolean;

  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect,
  ) {
    this.rowLocks = dialect === "postgres";
  }

  erase(request: {
    workspaceId: string;
    subjectId: string;
    id: string;
    requestedBy: string;
    now: number;
    audit: (counts: ErasureCounts) => AdminAuditEntry;
  }): Promise<{ receipt: ErasureReceipt; sessionIds: string[] }> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const sessions = await tx
        .selectFrom("sessions")
        .select(["id", "title"])
        .where("workspace_id", "=", request.workspaceId)
        .where("data_subject", "=", request.subjectId)
        .orderBy("id")
        .$if(this.rowLocks, (qb) => qb.forUpdate())
        .execute();
      const ids = sessions.map((s) => s.id);
      const counts: ErasureCounts = {
        sessions: ids.length,
        facts: 0,
        titles: 0,
        sendReceipts: 0,
        pushNotifications: 0,
      };
      if (ids.length > 0) {
        const active = await tx
          .selectFrom("runs")
          .select("id")
          .where("session_id", "in", ids)
          // Executing or about to: literals, for the partial index of a session's active runs.
          .where(sql<boolean>`state in ('queued', 'claimed')`)
          .limit(1)
          .executeTakeFirst();
        if (active) throw subjectBusy();
        for (const id of ids) {
          const erased = await eraseFacts(tx, id);
          counts.facts += erased.facts;
          counts.sendReceipts += erased.sendReceipts;
        }
        counts.titles = await eraseTitles(tx, ids);
        await touchSessions(tx, ids);
        counts.pushNotifications = await erasePushBodies(tx, request.workspaceId, ids);
        // What the sessions mounted (attachment instructions, repository URLs and sealed tokens) goes.
        await deleteSessionResources(tx, ids);
      }
      await tx
        .insertInto("data_subject_erasures")
        .values({
          id: request.id,
          workspace_id: request.workspaceId,
          subject_id: request.subjectId,
          requested_by: request.requestedBy,
          counts_json: toJson(counts),
          created_at: request.now,
        })
        .execute();
      if (removedAnything(counts)) await writeAudit(tx, request.audit(counts));
      const receipt = {
        id: request.id,
        workspaceId: request.workspaceId,
        subjectId: request.subjectId,
        counts,
        removed: removedAnything(counts),
        createdAt: request.now,
      };
      return { receipt, sessionIds: ids };
    });
  }

  /**
   * PostgreSQL keeps each rewritten or deleted row's old version in the table's files until a
   * vacuum; a plain VACUUM frees the space but leaves the bytes in the page (measured), only a
   * rewrite (VACUUM FULL) drops them. The rewrite waits at most `VACUUM_LOCK_TIMEOUT` for its
   * exclusive lock, so a busy table fails the vacuum rather than stalling every session behind it.
   */
  async vacuum(mode: ErasureVacuum): Promise<ErasureVacuumOutcome> {
    if (this.dialect !== "postgres") return "not_applicable";
    if (mode === "off") return "off";
    const tables = sql.join(ERASED_TABLES.map((table) => sql.table(table)));
    await this.db.connection().execute(async (conn) => {
      await sql`set lock_timeout = ${sql.lit(VACUUM_LOCK_TIMEOUT)}`.execute(conn);
      try {
        if (mode === "full") await sql`vacuum (full) ${tables}`.execute(conn);
        else await sql`vacuum ${tables}`.execute(conn);
      } finally {
        await sql`reset lock_timeout`.execute(conn);
      }
    });
    return mode;
  }

  async lastErasedAt(workspaceId: string, subjectId: string): Promise<number | null> {
    const row = await this.db
      .selectFrom("data_subject_erasures")
      .select("created_at")
      .where("workspace_id", "=", workspaceId)
      .where("subject_id", "=", subjectId)
      .orderBy("created_at", "desc")
      .limit(1)
      .executeTakeFirst();
    return row ? Number(row.created_at) : null;
  }

  async listErasures(workspaceId: string, subjectId: string): Promise<ErasureReceipt[]> {
    const rows = await this.db
      .selectFrom("data_subject_erasures")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("subject_id", "=", subjectId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(100)
      .execute();
    return rows.map((r) => {
      const counts = fromJson<ErasureCounts>(r.counts_json);
      return {
        id: r.id,
        workspaceId: r.workspace_id,
        subjectId: r.subject_id,
        counts,
        removed: removedAnything(counts),
        createdAt: Number(r.created_at),
      };
    });
  }
}

function removedAnything(c: ErasureCounts): boolean {
  return c.facts + c.titles + c.sendReceipts + c.pushNotifications > 0;
}

/**
 * Rewrites each fact that carries content as its tombstone: same thread, version, id and time.
 * A send's receipt holds only the ids it echoes, so a retried send answers the tombstones; it is
 * counted as erased when its echo was.
 */
async function eraseFacts(tx: Tx, sessionId: string): Promise<{ facts: number; sendReceipts: number }> {
  const rows = await tx
    .selectFrom("commits")
    .select(["thread_id", "base_version", "facts_json", "echo_json"])
    .where("session_id", "=", sessionId)
    .execute();
  let facts = 0;
  let sendReceipts = 0;
  for (const row of rows) {
    const erased = new Set<number>();
    const rewritten = decodeFacts(row.facts_json).map((fact, i) => {
      const tombstone = tombstoneStored(fact);
      if (!tombstone) return fact;
      erased.add(i);
      return tombstone;
    });
    if (erased.size === 0) continue;
    await tx
      .updateTable("commits")
      .set({ facts_json: encodeFacts(rewritten) })
      .where("thread_id", "=", row.thread_id)
      .where("base_version", "=", row.base_version)
      .execute();
    facts += erased.size;
    if (row.echo_json && fromJson<number[]>(row.echo_json).some((i) => erased.has(i))) sendReceipts++;
  }
  return { facts, sendReceipts };
}

/**
 * A new version of each session row, nothing in it changed: a replica that remembers one of these
 * sessions (its facts included, to hand a send's run to an idle slot without reading them) checks
 * the row's version in its send's statement, so it reads the tombstones instead of handing over
 * what it remembered.
 */
async function touchSessions(tx: Tx, ids: string[]): Promise<void> {
  await tx
    .updateTable("sessions")
    .set({ updated_at: sql<number>`updated_at` })
    .where("id", "in", ids)
    .execute();
}

/** A title is free text a client may derive from the conversation: it goes; metadata (ids) stays. */
async function eraseTitles(tx: Tx, ids: string[]): Promise<number> {
  const result = await tx
    .updateTable("sessions")
    .set({ title: null })
    .where("id", "in", ids)
    .where("title", "is not", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Webhook notification bodies copy the task's messages: the subject's are deleted, sent or not. */
async function erasePushBodies(tx: Tx, workspaceId: string, ids: string[]): Promise<number> {
  const configs = await tx
    .selectFrom("push_configs")
    .select(["task_id", "config_id"])
    .where("workspace_id", "=", workspaceId)
    .where("session_id", "in", ids)
    .execute();
  let deleted = 0;
  for (const config of configs) {
    const result = await tx
      .deleteFrom("push_outbox")
      .where("workspace_id", "=", workspaceId)
      .where("task_id", "=", config.task_id)
      .where("config_id", "=", config.config_id)
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}
