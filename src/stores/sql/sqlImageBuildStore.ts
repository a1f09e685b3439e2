import type {
  BuildFenceRefusal,
  ImageBuildStore,
  ImageBuildUser,
  WorkspaceImageBuild,
} from "../../coordinator/imageBuilds/ports.js";
import {
  type BuildLease,
  type BuildOutcome,
  buildLeaseProblem,
  type ImageBuildKey,
  type ImageBuildRecord,
  type ImageBuildState,
  imageBuildId,
} from "../../kernel/imageBuild.js";
import type { PackageResolution } from "../../kernel/packageResolution.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";
import { type Db, decodeCursor, encodeCursor, fromJson } from "./db.js";
import type { Database } from "./schema.js";

type Row = Database["image_builds"];

/**
 * Image-build demands on SQLite and PostgreSQL alike. Every lease-guarded write is one conditional
 * UPDATE (state, owner, epoch and lease in its WHERE), so the fence holds under concurrent writers on
 * both backends without row locks: a write that matched no row was refused, and is explained from a
 * fresh read.
 */
export class SqlImageBuildStore implements ImageBuildStore {
  constructor(private readonly db: Db) {}

  async demand(
    key: ImageBuildKey,
    environmentId: string,
    revision: number,
    now: number,
  ): Promise<ImageBuildRecord> {
    const id = imageBuildId(key);
    await this.db
      .insertInto("image_builds")
      .values({
        id,
        base_image: key.baseImage,
        resolution_id: key.resolutionId,
        recipe_digest: key.recipeDigest,
        state: "pending",
        owner: null,
        epoch: 0,
        lease_expires_at: null,
        attempts: 0,
        digest: null,
        image_reference: null,
        error: null,
        log_tail: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((c) => c.column("id").doNothing())
      .execute();
    await this.db
      .insertInto("environment_image_builds")
      .values({ environment_id: environmentId, revision, build_id: id, created_at: now })
      .onConflict((c) => c.columns(["environment_id", "revision"]).doNothing())
      .execute();
    const linked = await this.forRevision(environmentId, revision);
    if (!linked) throw new Error(`the image build of ${environmentId}@${revision} was not recorded`);
    return linked;
  }

  async get(id: string): Promise<ImageBuildRecord | null> {
    const row = await this.db.selectFrom("image_builds").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async forRevision(environmentId: string, revision: number): Promise<ImageBuildRecord | null> {
    const link = await this.db
      .selectFrom("environment_image_builds")
      .select("build_id")
      .where("environment_id", "=", environmentId)
      .where("revision", "=", revision)
      .executeTakeFirst();
    return link ? this.get(link.build_id) : null;
  }

  async claim(owner: string, leaseMs: number, now: number): Promise<ImageBuildRecord | null> {
    // Compare-and-set on (id, state, epoch): two claimers of one build cannot both win.
    for (let round = 0; round < 5; round++) {
      const candidates = await this.db
        .selectFrom("image_builds")
        .selectAll()
        .where((eb) =>
          eb.or([
            eb("state", "=", "pending"),
            eb.and([eb("state", "=", "building"), eb("lease_expires_at", "<=", now)]),
          ]),
        )
        .orderBy("created_at")
        .orderBy("id")
        .limit(5)
        .execute();
      if (candidates.length === 0) return null;
      for (const candidate of candidates) {
        const result = await this.db
          .updateTable("image_builds")
          .set({
            state: "building",
            owner,
            epoch: candidate.epoch + 1,
            lease_expires_at: now + leaseMs,
            attempts: candidate.attempts + 1,
            updated_at: now,
          })
          .where("id", "=", candidate.id)
          .where("state", "=", candidate.state)
          .where("epoch", "=", candidate.epoch)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1) return this.get(candidate.id);
      }
    }
    return null;
  }

  renew(lease: BuildLease, leaseMs: number, now: number): Promise<ImageBuildRecord | BuildFenceRefusal> {
    return this.fenced(lease, now, { lease_expires_at: now + leaseMs, updated_at: now });
  }

  settle(
    lease: BuildLease,
    outcome: BuildOutcome,
    now: number,
  ): Promise<ImageBuildRecord | BuildFenceRefusal> {
    const settled =
      outcome.kind === "ready"
        ? {
            state: "ready",
            digest: outcome.digest,
            image_reference: outcome.imageReference,
            error: null,
            log_tail: outcome.logTail,
          }
        : {
            state: "failed",
            digest: null,
            image_reference: null,
            error: outcome.error,
            log_tail: outcome.logTail,
          };
    return this.fenced(lease, now, { ...settled, owner: null, lease_expires_at: null, updated_at: now });
  }

  release(lease: BuildLease, now: number): Promise<ImageBuildRecord | BuildFenceRefusal> {
    return this.fenced(lease, now, {
      state: "pending",
      owner: null,
      lease_expires_at: null,
      updated_at: now,
    });
  }

  async resolution(resolutionId: string): Promise<PackageResolution | null> {
    const row = await this.db
      .selectFrom("environment_package_resolutions")
      .select("content_json")
      .where("resolution_id", "=", resolutionId)
      .limit(1)
      .executeTakeFirst();
    return row ? fromJson<PackageResolution>(row.content_json) : null;
  }

  async listForWorkspace(workspaceId: string, q: ListQuery): Promise<Page<WorkspaceImageBuild>> {
    const cursor = decodeCursor("image_builds", q.cursor);
    // Visibility goes through the workspace's own environments: a shared build is reached only
    // by a link from one of them, never by its id alone.
    const referenced = this.db
      .selectFrom("environment_image_builds as link")
      .innerJoin("environments as env", "env.id", "link.environment_id")
      .select("link.build_id")
      .where("env.workspace_id", "=", workspaceId);
    let query = this.db.selectFrom("image_builds").selectAll().where("id", "in", referenced);
    if (cursor && typeof cursor.at === "number" && typeof cursor.id === "string") {
      const { at, id } = cursor;
      query = query.where((eb) =>
        eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]),
      );
    }
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const builds = rows.slice(0, q.limit).map(toRecord);
    const users = await this.usersOf(
      workspaceId,
      builds.map((b) => b.id),
    );
    const last = builds[builds.length - 1];
    return {
      data: builds.map((build) => ({ build, environments: users.get(build.id) ?? [] })),
      nextCursor:
        rows.length > q.limit && last
          ? encodeCursor("image_builds", { at: last.createdAt, id: last.id })
          : null,
    };
  }

  /** Per build id, the environments of `workspaceId` (only) that link to it. */
  private async usersOf(workspaceId: string, buildIds: string[]): Promise<Map<string, ImageBuildUser[]>> {
    const users = new Map<string, ImageBuildUser[]>();
    if (buildIds.length === 0) return users;
    const links = await this.db
      .selectFrom("environment_image_builds as link")
      .innerJoin("environments as env", "env.id", "link.environment_id")
      .select(["link.build_id", "link.environment_id", "link.revision", "env.name", "env.latest_revision"])
      .where("env.workspace_id", "=", workspaceId)
      .where("link.build_id", "in", buildIds)
      .orderBy("link.environment_id")
      .orderBy("link.revision")
      .execute();
    for (const link of links) {
      const list = users.get(link.build_id) ?? [];
      let user = list.find((u) => u.environmentId === link.environment_id);
      if (!user) {
        user = { environmentId: link.environment_id, name: link.name, revisions: [], current: false };
        list.push(user);
        users.set(link.build_id, list);
      }
      const revision = Number(link.revision);
      user.revisions.push(revision);
      if (revision === Number(link.latest_revision)) user.current = true;
    }
    return users;
  }

  async rebuild(id: string, now: number): Promise<ImageBuildRecord | null> {
    const result = await this.db
      .updateTable("image_builds")
      .set({ state: "pending", owner: null, lease_expires_at: null, error: null, updated_at: now })
      .where("id", "=", id)
      .where("state", "=", "failed")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? this.get(id) : null;
  }

  /** One UPDATE guarded by the whole lease; a refused one is explained from a fresh read. */
  private async fenced(
    lease: BuildLease,
    now: number,
    set: Partial<Row>,
  ): Promise<ImageBuildRecord | BuildFenceRefusal> {
    const result = await this.db
      .updateTable("image_builds")
      .set(set)
      .where("id", "=", lease.buildId)
      .where("state", "=", "building")
      .where("owner", "=", lease.owner)
      .where("epoch", "=", lease.epoch)
      .where("lease_expires_at", ">", now)
      .executeTakeFirst();
    const current = await this.get(lease.buildId);
    if (Number(result.numUpdatedRows) === 1 && current) return current;
    return {
      refused: buildLeaseProblem(current, lease, now) ?? `image build ${lease.buildId} changed meanwhile`,
    };
  }
}

function toRecord(row: Row): ImageBuildRecord {
  return {
    id: row.id,
    baseImage: row.base_image,
    resolutionId: row.resolution_id,
    recipeDigest: row.recipe_digest,
    state: row.state as ImageBuildState,
    owner: row.owner,
    epoch: Number(row.epoch),
    leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    attempts: Number(row.attempts),
    digest: row.digest,
    imageReference: row.image_reference,
    error: row.error,
    logTail: row.log_tail,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
