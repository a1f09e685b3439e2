import type { NameEntry, NameSpace, SessionNameStore } from "../../coordinator/ports.js";
import type { Db } from "./db.js";

/**
 * Names as rows keyed (workspace, space, name), dialect-neutral. Every decision is one
 * `insert … on conflict do update … where` statement, atomic on both backends: PostgreSQL takes
 * the row's lock for it, SQLite has one writer.
 */
export class SqlSessionNameStore implements SessionNameStore {
  constructor(private readonly db: Db) {}

  async get(workspaceId: string, space: NameSpace, name: string): Promise<NameEntry | null> {
    const row = await this.db
      .selectFrom("session_names")
      .select(["target_id", "reservation", "reserved_at"])
      .where("workspace_id", "=", workspaceId)
      .where("space", "=", space)
      .where("name", "=", name)
      .executeTakeFirst();
    if (!row) return null;
    if (row.target_id !== null) return { state: "bound", targetId: row.target_id };
    return { state: "reserved", token: row.reservation ?? "", reservedAt: Number(row.reserved_at ?? 0) };
  }

  async reserve(
    workspaceId: string,
    space: NameSpace,
    name: string,
    token: string,
    now: number,
    staleBefore: number,
    replacing?: string,
  ): Promise<boolean> {
    const row = await this.db
      .insertInto("session_names")
      .values({
        workspace_id: workspaceId,
        space,
        name,
        target_id: null,
        reservation: token,
        reserved_at: now,
        created_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(["workspace_id", "space", "name"])
          .doUpdateSet({ target_id: null, reservation: token, reserved_at: now })
          .where((eb) => {
            const stale = eb.and([
              eb("session_names.target_id", "is", null),
              eb("session_names.reserved_at", "<", staleBefore),
            ]);
            return replacing === undefined
              ? stale
              : eb.or([stale, eb("session_names.target_id", "=", replacing)]);
          }),
      )
      .returning("reservation")
      .executeTakeFirst();
    return row?.reservation === token;
  }

  async bind(
    workspaceId: string,
    space: NameSpace,
    name: string,
    token: string,
    targetId: string,
    now: number,
  ): Promise<boolean> {
    const row = await this.db
      .insertInto("session_names")
      .values({
        workspace_id: workspaceId,
        space,
        name,
        target_id: targetId,
        reservation: null,
        reserved_at: null,
        created_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(["workspace_id", "space", "name"])
          .doUpdateSet({ target_id: targetId, reservation: null, reserved_at: null })
          .where("session_names.target_id", "is", null)
          .where("session_names.reservation", "=", token),
      )
      .returning("target_id")
      .executeTakeFirst();
    return row?.target_id === targetId;
  }

  async namesOf(workspaceId: string, space: NameSpace, targetId: string): Promise<string[]> {
    // `session_names_target` indexes target_id.
    const rows = await this.db
      .selectFrom("session_names")
      .select("name")
      .where("target_id", "=", targetId)
      .where("workspace_id", "=", workspaceId)
      .where("space", "=", space)
      .execute();
    return rows.map((r) => r.name);
  }

  async release(workspaceId: string, space: NameSpace, name: string, token: string): Promise<void> {
    await this.db
      .deleteFrom("session_names")
      .where("workspace_id", "=", workspaceId)
      .where("space", "=", space)
      .where("name", "=", name)
      .where("target_id", "is", null)
      .where("reservation", "=", token)
      .execute();
  }
}
