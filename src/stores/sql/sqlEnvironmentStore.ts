import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { EnvironmentConfig } from "../../coordinator/environmentConfig.js";
import type { EnvironmentRecord, EnvironmentStore, ListQuery, Page } from "../../coordinator/ports.js";
import type { PackageResolution } from "../../kernel/packageResolution.js";
import { type Db, decodeCursor, encodeCursor, fromJson, toJson } from "./db.js";
import type { Database } from "./schema.js";
import { writeAudit } from "./sqlAdminAudit.js";

type Row = Database["environments"] & { config_json: string };

export class SqlEnvironmentStore implements EnvironmentStore {
  constructor(private readonly db: Db) {}

  async create(record: EnvironmentRecord, audit: AdminAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto("environments").values(headRow(record)).execute();
      await tx
        .insertInto("environment_revisions")
        .values({
          environment_id: record.id,
          revision: record.revision,
          config_json: toJson(record.config),
          created_at: record.updatedAt,
        })
        .execute();
      await writeAudit(tx, audit);
    });
  }

  async get(workspaceId: string, id: string): Promise<EnvironmentRecord | null> {
    const row = await this.selectHeads()
      .where("environments.workspace_id", "=", workspaceId)
      .where("environments.id", "=", id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async getRevision(environmentId: string, revision: number): Promise<EnvironmentConfig | null> {
    const row = await this.db
      .selectFrom("environment_revisions")
      .select("config_json")
      .where("environment_id", "=", environmentId)
      .where("revision", "=", revision)
      .executeTakeFirst();
    return row ? fromJson<EnvironmentConfig>(row.config_json) : null;
  }

  async packageResolution(environmentId: string, revision: number): Promise<PackageResolution | null> {
    const row = await this.db
      .selectFrom("environment_package_resolutions")
      .select("content_json")
      .where("environment_id", "=", environmentId)
      .where("revision", "=", revision)
      .executeTakeFirst();
    return row ? fromJson<PackageResolution>(row.content_json) : null;
  }

  async recordPackageResolution(
    environmentId: string,
    revision: number,
    resolution: PackageResolution,
    at: number,
  ): Promise<PackageResolution> {
    // Insert-if-absent: a second writer's row is dropped and it reads the first one's.
    await this.db
      .insertInto("environment_package_resolutions")
      .values({
        environment_id: environmentId,
        revision,
        resolution_id: resolution.id,
        content_json: toJson(resolution),
        created_at: at,
      })
      .onConflict((c) => c.columns(["environment_id", "revision"]).doNothing())
      .execute();
    const recorded = await this.packageResolution(environmentId, revision);
    if (!recorded) throw new Error(`the package resolution of ${environmentId}@${revision} was not recorded`);
    return recorded;
  }

  async update(record: EnvironmentRecord, newRevision: boolean, audit: AdminAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const { id, ...rest } = headRow(record);
      const updated = await tx
        .updateTable("environments")
        .set(rest)
        .where("id", "=", id)
        .where("workspace_id", "=", record.workspaceId)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      if (newRevision) {
        await tx
          .insertInto("environment_revisions")
          .values({
            environment_id: record.id,
            revision: record.revision,
            config_json: toJson(record.config),
            created_at: record.updatedAt,
          })
          .execute();
      }
      await writeAudit(tx, audit);
      return true;
    });
  }

  async list(
    workspaceId: string,
    q: ListQuery & { includeArchived: boolean },
  ): Promise<Page<EnvironmentRecord>> {
    const cursor = decodeCursor("environments", q.cursor);
    let query = this.selectHeads().where("environments.workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("environments.archived_at", "is", null);
    if (cursor && typeof cursor.id === "string") query = query.where("environments.id", "<", cursor.id);
    const rows = await query
      .orderBy("environments.id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("environments", { id: last.id }) : null,
    };
  }

  async delete(workspaceId: string, id: string, audit: AdminAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx
        .deleteFrom("environments")
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", id)
        .executeTakeFirst();
      // A deleted default environment is made anew on next use.
      await tx
        .deleteFrom("session_names")
        .where("workspace_id", "=", workspaceId)
        .where("space", "=", "default_environment")
        .where("target_id", "=", id)
        .execute();
      // Revisions stay: sessions pinned to them keep their exact environment.
      if (Number(result.numDeletedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  private selectHeads() {
    return this.db
      .selectFrom("environments")
      .innerJoin("environment_revisions", (join) =>
        join
          .onRef("environment_revisions.environment_id", "=", "environments.id")
          .onRef("environment_revisions.revision", "=", "environments.latest_revision"),
      )
      .selectAll("environments")
      .select("environment_revisions.config_json");
  }
}

function headRow(r: EnvironmentRecord): Database["environments"] {
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    name: r.name,
    description: r.description,
    scope: r.scope,
    metadata_json: toJson(r.metadata),
    config_type: r.config.type,
    latest_revision: r.revision,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    archived_at: r.archivedAt,
  };
}

function toRecord(row: Row): EnvironmentRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    scope: row.scope,
    metadata: fromJson<Record<string, string>>(row.metadata_json),
    config: fromJson<EnvironmentConfig>(row.config_json),
    revision: Number(row.latest_revision),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    archivedAt: row.archived_at === null ? null : Number(row.archived_at),
  };
}
