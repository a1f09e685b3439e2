import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Committed history as one row per commit (`commits`): the facts a commit appended, the session
// projection after them, and what the commit was for (a fenced operation's id and payload hash,
// or a client send's request hash and echo). A turn used to write a row per fact, move the
// thread's version, rewrite the session's projection columns and upsert a send receipt; now it
// inserts one row, and the primary key (thread, base version) is the version and duplicate check.
//
// Every fact keeps its id, type, body (byte for byte) and version. A migrated thread becomes one
// row per former event; its newest row carries the session's projection as it stood. The fenced
// operations already committed stay in `commit_operations` (retries still find their receipts);
// the send receipts, an idempotency aid of the last few minutes, are dropped. `events` becomes a
// read-only view over `commits` for operators' queries. The one-call PostgreSQL functions of
// migrations 005–015 are dropped: the commit and the input append are plain statements now.
// The runs' claim indexes become one partial index, and the index of a session's runs holds only
// its active ones, so a finished run's row leaves no entry in them.
export const commitRows: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    await db.schema
      .createTable("commits")
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("base_version", "bigint", (c) => c.notNull())
      .addColumn("version", "bigint", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("facts_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("status", "text")
      .addColumn("pending_json", "text")
      .addColumn("usage_json", "text")
      .addColumn("op_id", "text")
      .addColumn("run_id", "text")
      .addColumn("payload_hash", "text")
      .addColumn("settled", "text")
      .addColumn("request_hash", "text")
      .addColumn("body_hash", "text")
      .addColumn("echo_json", "text")
      .addPrimaryKeyConstraint("commits_pk", ["thread_id", "base_version"])
      .execute();
    // Only fenced commits carry an operation id: a partial index holds just those.
    await sql`create unique index commits_by_operation on commits (op_id) where op_id is not null`.execute(
      db,
    );

    const quote = postgres
      ? (column: string) => `to_json(${column})::text`
      : (column: string) => `json_quote(${column})`;
    await sql
      .raw(
        `insert into commits (thread_id, base_version, version, session_id, facts_json, created_at,
          status, pending_json, usage_json)
        select e.thread_id, e.seq - 1, e.seq, e.session_id,
          '[[' || ${quote("e.id")} || ',' || ${quote("e.type")} || ',' || e.body_json || ']]',
          e.created_at,
          case when e.seq = t.version then s.status end,
          case when e.seq = t.version then s.pending_json end,
          case when e.seq = t.version then s.usage_json end
        from events e
        join threads t on t.id = e.thread_id
        left join sessions s on s.id = e.session_id`,
      )
      .execute(db);
    await db.schema.dropTable("events").execute();
    await db.schema.dropTable("send_receipts").execute();
    await db.schema.alterTable("threads").dropColumn("version").execute();

    // Every UPDATE of a run writes a new entry into each of its indexes: the claim's index holds
    // only runs a claim may take, and a subject's index only sessions that name one.
    await db.schema.dropIndex("runs_claimable").execute();
    await db.schema.dropIndex("runs_lapsed").execute();
    await sql`create index runs_claimable on runs (state, available_at) where state in ('queued', 'claimed')`.execute(
      db,
    );
    await db.schema.dropIndex("runs_by_session").execute();
    await sql`create index runs_by_session on runs (session_id) where state in ('queued', 'claimed', 'awaiting')`.execute(
      db,
    );
    await db.schema.dropIndex("sessions_data_subject").execute();
    await sql`create index sessions_data_subject on sessions (workspace_id, data_subject) where data_subject is not null`.execute(
      db,
    );

    const facts = postgres
      ? `select c.thread_id, c.base_version + f.n as seq, f.value->>0 as id, c.session_id,
           f.value->>1 as type, (f.value->2)::text as body_json, c.created_at
         from commits c cross join lateral json_array_elements(c.facts_json::json) with ordinality as f(value, n)`
      : `select c.thread_id, c.base_version + f.key + 1 as seq, json_extract(f.value, '$[0]') as id,
           c.session_id, json_extract(f.value, '$[1]') as type, json_extract(f.value, '$[2]') as body_json,
           c.created_at
         from commits c, json_each(c.facts_json) f`;
    await sql.raw(`create view events as ${facts}`).execute(db);

    if (postgres) {
      for (const fn of [
        "awaken_commit_append_v1",
        "awaken_commit_append_v2",
        "awaken_commit_append_v3",
        "awaken_input_append_v1",
      ]) {
        await sql.raw(`drop function if exists ${fn}`).execute(db);
      }
    }
  },
};
