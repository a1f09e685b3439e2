import { sql } from "kysely";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import type { Db } from "../sql/db.js";
import { SqlSessionStore } from "../sql/sqlSessionStore.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";

/**
 * Sessions on PostgreSQL: a new session without resources is one statement, its own transaction —
 * the session row, its thread, and the wake notice that tells other replicas' hint streams the
 * thread exists (carried, so it costs no statement of its own).
 */
export class PostgresSessionStore extends SqlSessionStore {
  constructor(
    db: Db,
    private readonly notices?: CommitNotices,
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
    if (!carried) {
      await this.db
        .with("s", (db) => db.insertInto("sessions").values(session))
        .insertInto("threads")
        .values(thread)
        .execute();
      return;
    }
    // The thread row is inserted from the notify step, so the notify runs (an unreferenced SELECT
    // step would not) and commits with the rows.
    await this.db
      .with("s", (db) => db.insertInto("sessions").values(session))
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
      .execute();
    this.notices?.carried(carried.payloads);
  }
}
