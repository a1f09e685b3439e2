import type pg from "pg";
import { EnvironmentPinMoved } from "../../coordinator/environmentPin.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import type { Db } from "../sql/db.js";
import { sessionToRow } from "../sql/sessionRows.js";
import { SqlSessionStore } from "../sql/sqlSessionStore.js";
import { columnType, placeholders } from "./casStatement.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";
import type { InputReadCache } from "./inputReadCache.js";
import { statementName } from "./statementNames.js";

/**
 * Sessions on PostgreSQL: a new session without resources is one statement, its own transaction —
 * the session row, its thread, and the wake notice that tells other replicas' hint streams the
 * thread exists (carried, so it costs no statement of its own). Every new session checks its pin:
 * the environment revision it pins must be the newest of a live environment when it goes in (the
 * revision may come from what this process read lately, `PostgresEnvironmentStore`), else nothing
 * is written and `EnvironmentPinMoved` says so.
 */
export class PostgresSessionStore extends SqlSessionStore {
  constructor(
    db: Db,
    private readonly pool: pg.Pool,
    private readonly notices?: CommitNotices,
    private readonly reads?: InputReadCache,
  ) {
    super(db);
  }

  override async create(
    record: SessionRecord,
    resources: readonly SessionResourceRecord[] = [],
  ): Promise<void> {
    if (resources.length > 0) {
      await this.db.transaction().execute(async (tx) => {
        // The pinned revision is the newest of a live environment (see the statement below).
        const live = await tx
          .selectFrom("environments")
          .select("id")
          .where("id", "=", record.environmentId)
          .where("workspace_id", "=", record.workspaceId)
          .where("latest_revision", "=", record.environmentRevision)
          .where("archived_at", "is", null)
          .executeTakeFirst();
        if (!live) throw new EnvironmentPinMoved(record.environmentId, record.environmentRevision);
        await this.insertIn(tx, record, resources);
      });
      return;
    }
    const row = sessionToRow(record);
    const { $, values } = placeholders();
    const carried = carriedNotices(this.notices, [{ kind: "thread", thread: record.threadId, version: 0 }]);
    const { agent_snapshot_json: snapshot, ...columns } = row;
    const selected = Object.entries(columns).map(([column, value]) => `${$(value)}::${columnType(column)}`);
    // The catalog holds this snapshot already (the usual case: no override): the row points at it.
    const own = $(snapshot);
    const agent =
      record.agent.workspaceId === record.workspaceId
        ? `case when (select ea.snapshot_json from executable_agents ea where ea.workspace_id = ${$(record.agent.workspaceId)} and ea.agent_id = ${$(record.agent.agentId)} and ea.version = ${$(record.agent.version)}::bigint) = ${own}::text then '' else ${own}::text end`
        : `${own}::text`;
    const ctes = [
      // The pin: the newest revision of a live environment as the statement sees it. Not locked: a
      // share lock per new session writes WAL and, with sessions starting at once, multixacts.
      `g as (select 1 from environments where id = ${$(record.environmentId)} and workspace_id = ${$(record.workspaceId)} and latest_revision = ${$(record.environmentRevision)}::bigint and archived_at is null)`,
      `s as (insert into sessions (${Object.keys(columns).join(", ")}, agent_snapshot_json) select ${selected.join(", ")}, ${agent} from g returning xmin::text as x)`,
      `t as (insert into threads (id, session_id, created_at) select ${$(record.threadId)}::text, ${$(record.id)}::text, ${$(record.createdAt)}::bigint from s)`,
    ];
    // Selected from below, so it runs (an unreferenced SELECT step would not), and only with the rows.
    if (carried)
      ctes.push(
        `nf as (select pg_notify(${$(carried.channel)}, p) from unnest(${$(carried.payloads)}::text[]) as p where exists (select 1 from s))`,
      );
    const text = `with ${ctes.join(", ")} select (select x from s) as s_xmin${carried ? ", (select count(*) from nf)::int as notified" : ""}`;
    const { rows } = await this.pool.query<{ s_xmin: string | null }>({
      name: statementName(text),
      text,
      values,
    });
    const xmin = rows[0]?.s_xmin ?? null;
    if (xmin === null) throw new EnvironmentPinMoved(record.environmentId, record.environmentRevision);
    if (carried) this.notices?.carried(carried.payloads);
    this.remember(record, xmin);
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
