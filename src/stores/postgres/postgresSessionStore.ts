import { type QueryCreator, sql } from "kysely";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import type { Db } from "../sql/db.js";
import type { Database } from "../sql/schema.js";
import { sessionToRow } from "../sql/sessionRows.js";
import { SqlSessionStore } from "../sql/sqlSessionStore.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";
import type { InputReadCache } from "./inputReadCache.js";

/**
 * Sessions on PostgreSQL: a new session without resources is one statement, its own transaction —
 * the session row, its thread, and the wake notice that tells other replicas' hint streams the
 * thread exists (carried, so it costs no statement of its own).
 */
export class PostgresSessionStore extends SqlSessionStore {
  constructor(
    db: Db,
    private readonly notices?: CommitNotices,
    private readonly reads?: InputReadCache,
  ) {
    super(db);
  }

  override async create(
    record: SessionRecord,
    resources: readonly SessionResourceRecord[] = [],
  ): Promise<void> {
    if (resources.length > 0) return super.create(record, resources);
    const { session, thread } = this.insertValues(record);
    const carried = carriedNotices(this.notices, [{ kind: "thread", thread: record.threadId, version: 0 }]);
    // The row's version comes back, so the session's first send can skip reading what this wrote.
    const inserted = (db: QueryCreator<Database>) =>
      db.insertInto("sessions").values(session).returning(sql<string>`xmin::text`.as("x"));
    const version = sql<string>`(select x from s)`.as("s_xmin");
    if (!carried) {
      const row = await this.db
        .with("s", inserted)
        .insertInto("threads")
        .values(thread)
        .returning(version)
        .executeTakeFirstOrThrow();
      this.remember(record, row.s_xmin);
      return;
    }
    // The thread row is inserted from the notify step, so the notify runs (an unreferenced SELECT
    // step would not) and commits with the rows.
    const row = await this.db
      .with("s", inserted)
      .with("n", (db) =>
        db
          .selectFrom(sql<{ p: string }>`unnest(${carried.payloads}::text[])`.as("u"))
          .select(sql<number>`count(pg_notify(${carried.channel}, u))::int`.as("sent")),
      )
      .insertInto("threads")
      .columns(["id", "session_id", "created_at"])
      .expression((eb) =>
        eb
          .selectFrom("n")
          .select([
            sql<string>`${thread.id}::text`.as("id"),
            sql<string>`${thread.session_id}::text`.as("session_id"),
            sql<number>`${thread.created_at}::bigint`.as("created_at"),
          ]),
      )
      .returning(version)
      .executeTakeFirstOrThrow();
    this.notices?.carried(carried.payloads);
    this.remember(record, row.s_xmin);
  }

  /** The new session as the input append reads it: no commit, no run. */
  private remember(record: SessionRecord, xmin: string): void {
    const row = sessionToRow(record);
    this.reads?.created({
      ...row,
      s_xmin: xmin,
      agent_snapshot: row.agent_snapshot_json,
      head_version: null,
      h_status: null,
      h_pending: null,
      h_usage: null,
      head_at: null,
      run_id: null,
      run_state: null,
      run_epoch: null,
      // A session with resources is inserted by the generic path, which remembers nothing.
      has_resources: false,
    });
  }
}
