import type { ListQuery, Page } from "../../kernel/pagination.js";
import type { BlobDigest, RunSkill } from "../../resources/ports.js";
import type {
  SkillListQuery,
  SkillRecord,
  SkillStore,
  SkillVersionRecord,
} from "../../resources/skills/ports.js";
import { begin, type Db, type DbOrTx, decodeCursor, encodeCursor, type SqlDialect, type Tx } from "./db.js";
import type { SkillTables } from "./tables/skillTables.js";

type SkillRow = SkillTables["skills"];
type VersionRow = SkillTables["skill_versions"];

export class SqlSkillStore implements SkillStore {
  readonly family = "skills" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}

  async createSkill(skill: SkillRecord, first: SkillVersionRecord): Promise<void> {
    await begin(this.db, this.dialect).execute(async (tx) => {
      await tx.insertInto("skills").values(skillRow(skill)).execute();
      await insertVersion(tx, first);
    });
  }

  async getSkill(workspaceId: string, skillId: string): Promise<SkillRecord | null> {
    const row = await this.db
      .selectFrom("skills")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", skillId)
      .executeTakeFirst();
    return row ? toSkill(row) : null;
  }

  async listSkills(workspaceId: string, q: SkillListQuery): Promise<Page<SkillRecord>> {
    const cursor = decodeCursor("skills", q.cursor);
    // Only custom skills are stored: Anthropic's are not served by this product.
    if (q.source !== null && q.source !== "custom") return { data: [], nextCursor: null };
    let query = this.db.selectFrom("skills").selectAll().where("workspace_id", "=", workspaceId);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toSkill);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("skills", { id: last.id }) : null,
    };
  }

  async deleteSkill(workspaceId: string, skillId: string): Promise<BlobDigest[] | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const deleted = await tx
        .deleteFrom("skills")
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", skillId)
        .executeTakeFirst();
      if (Number(deleted.numDeletedRows) !== 1) return null;
      const versionsOfSkill = (sub: Tx) =>
        sub.selectFrom("skill_versions").select("id").where("skill_id", "=", skillId);
      const digests = await tx
        .selectFrom("skill_version_files")
        .select("digest")
        .distinct()
        .where("version_id", "in", versionsOfSkill(tx))
        .execute();
      await tx.deleteFrom("skill_version_files").where("version_id", "in", versionsOfSkill(tx)).execute();
      await tx.deleteFrom("skill_versions").where("skill_id", "=", skillId).execute();
      return digests.map((row) => row.digest);
    });
  }

  async references(digest: BlobDigest): Promise<boolean> {
    const row = await this.db
      .selectFrom("skill_version_files")
      .select("version_id")
      .where("digest", "=", digest)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async addVersion(version: SkillVersionRecord, now: number): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      if (!(await this.lockSkill(tx, version.workspaceId, version.skillId))) return false;
      await insertVersion(tx, version);
      // Read after the lock: a version another transaction added meanwhile is seen, so latest is
      // always the newest version (ids order by creation time).
      await setLatest(tx, version.skillId, now);
      return true;
    });
  }

  async getVersion(
    workspaceId: string,
    skillId: string,
    versionId: string,
  ): Promise<SkillVersionRecord | null> {
    const row = await this.db
      .selectFrom("skill_versions")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("skill_id", "=", skillId)
      .where("id", "=", versionId)
      .executeTakeFirst();
    if (!row) return null;
    const files = await this.db
      .selectFrom("skill_version_files")
      .select(["path", "digest", "size_bytes"])
      .where("version_id", "=", row.id)
      .orderBy("path")
      .execute();
    return {
      ...toVersion(row),
      files: files.map((f) => ({ path: f.path, digest: f.digest, sizeBytes: Number(f.size_bytes) })),
    };
  }

  async listVersions(workspaceId: string, skillId: string, q: ListQuery): Promise<Page<SkillVersionRecord>> {
    const cursor = decodeCursor("skill_versions", q.cursor);
    let query = this.db
      .selectFrom("skill_versions")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("skill_id", "=", skillId);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toVersion);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("skill_versions", { id: last.id }) : null,
    };
  }

  async deleteVersion(
    workspaceId: string,
    skillId: string,
    versionId: string,
    now: number,
  ): Promise<{ outcome: "deleted"; digests: BlobDigest[] } | { outcome: "absent" } | { outcome: "last" }> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      if (!(await this.lockSkill(tx, workspaceId, skillId))) return { outcome: "absent" };
      const versions = await tx
        .selectFrom("skill_versions")
        .select("id")
        .where("skill_id", "=", skillId)
        .orderBy("id", "desc")
        .limit(2)
        .execute();
      if (!versions.some((v) => v.id === versionId)) {
        const exists = await tx
          .selectFrom("skill_versions")
          .select("id")
          .where("skill_id", "=", skillId)
          .where("id", "=", versionId)
          .executeTakeFirst();
        if (!exists) return { outcome: "absent" };
      } else if (versions.length === 1) {
        return { outcome: "last" };
      }
      const digests = await tx
        .selectFrom("skill_version_files")
        .select("digest")
        .distinct()
        .where("version_id", "=", versionId)
        .execute();
      await tx.deleteFrom("skill_version_files").where("version_id", "=", versionId).execute();
      await tx.deleteFrom("skill_versions").where("id", "=", versionId).execute();
      await setLatest(tx, skillId, now);
      return { outcome: "deleted", digests: digests.map((row) => row.digest) };
    });
  }

  async versionForRun(workspaceId: string, skillId: string, version: string): Promise<RunSkill | null> {
    const found = await this.getVersion(workspaceId, skillId, version);
    if (!found) return null;
    return {
      skillId: found.skillId,
      version: found.id,
      name: found.name,
      description: found.description,
      files: found.files.map((f) => ({ path: f.path, digest: f.digest, sizeBytes: f.sizeBytes })),
    };
  }

  /** The skill's row, locked until the transaction ends on PostgreSQL (SQLite has one writer). */
  private async lockSkill(tx: Tx, workspaceId: string, skillId: string): Promise<boolean> {
    let query = tx
      .selectFrom("skills")
      .select("id")
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", skillId);
    if (this.dialect === "postgres") query = query.forUpdate();
    return (await query.executeTakeFirst()) !== undefined;
  }
}

async function insertVersion(tx: DbOrTx, v: SkillVersionRecord): Promise<void> {
  await tx
    .insertInto("skill_versions")
    .values({
      id: v.id,
      skill_id: v.skillId,
      workspace_id: v.workspaceId,
      name: v.name,
      description: v.description,
      content_digest: v.contentDigest,
      created_at: v.createdAt,
    })
    .execute();
  if (v.files.length === 0) return;
  // Chunked: one statement's bound parameters stay well under SQLite's and PostgreSQL's limits.
  for (let at = 0; at < v.files.length; at += 200) {
    await tx
      .insertInto("skill_version_files")
      .values(
        v.files.slice(at, at + 200).map((f) => ({
          version_id: v.id,
          path: f.path,
          digest: f.digest,
          size_bytes: f.sizeBytes,
        })),
      )
      .execute();
  }
}

/** Points the skill at its newest version (the caller holds the skill's row lock). */
async function setLatest(tx: Tx, skillId: string, now: number): Promise<void> {
  const newest = await tx
    .selectFrom("skill_versions")
    .select("id")
    .where("skill_id", "=", skillId)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirstOrThrow();
  await tx
    .updateTable("skills")
    .set({ latest_version_id: newest.id, updated_at: now })
    .where("id", "=", skillId)
    .execute();
}

function skillRow(s: SkillRecord): SkillRow {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    display_name: s.displayName,
    name: s.name,
    latest_version_id: s.latestVersionId,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

function toSkill(r: SkillRow): SkillRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    displayName: r.display_name,
    name: r.name,
    latestVersionId: r.latest_version_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toVersion(r: VersionRow): SkillVersionRecord {
  return {
    id: r.id,
    skillId: r.skill_id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    contentDigest: r.content_digest,
    files: [],
    createdAt: Number(r.created_at),
  };
}
