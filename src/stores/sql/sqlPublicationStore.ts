import { type Insertable, type Selectable, sql } from "kysely";
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { AgentDefinition } from "../../control/agentDefinition.js";
import type {
  AgentHead,
  AgentListQuery,
  PublicationStore,
  StoredAgent,
  StoredPublication,
} from "../../control/ports.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";
import { type Db, decodeCursor, encodeCursor, fromJson, toJson } from "./db.js";
import type { Database } from "./schema.js";
import { writeAudit } from "./sqlAdminAudit.js";

export class SqlPublicationStore implements PublicationStore {
  constructor(private readonly db: Db) {}

  async createAgent(head: AgentHead, first: StoredPublication, audit: AdminAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto("agents")
        .values({
          id: head.id,
          workspace_id: head.workspaceId,
          latest_version: head.latestVersion,
          created_at: head.createdAt,
          updated_at: head.updatedAt,
          archived_at: head.archivedAt,
        })
        .execute();
      await tx.insertInto("agent_publications").values(publicationRow(first)).execute();
      await writeAudit(tx, audit);
    });
  }

  async appendVersion(
    publication: StoredPublication,
    expectedLatest: number,
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const moved = await tx
        .updateTable("agents")
        .set({ latest_version: publication.version, updated_at: publication.createdAt })
        .where("id", "=", publication.agentId)
        .where("workspace_id", "=", publication.workspaceId)
        .where("latest_version", "=", expectedLatest)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await tx.insertInto("agent_publications").values(publicationRow(publication)).execute();
      await writeAudit(tx, audit);
      return true;
    });
  }

  async getHead(workspaceId: string, agentId: string): Promise<AgentHead | null> {
    const row = await this.db
      .selectFrom("agents")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", agentId)
      .executeTakeFirst();
    return row ? toHead(row) : null;
  }

  async getPublication(
    workspaceId: string,
    agentId: string,
    version: number,
  ): Promise<StoredPublication | null> {
    const row = await this.db
      .selectFrom("agent_publications")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("agent_id", "=", agentId)
      .where("version", "=", version)
      .executeTakeFirst();
    return row ? toPublication(row) : null;
  }

  async getAgent(workspaceId: string, agentId: string, version?: number): Promise<StoredAgent | null> {
    const row = await this.db
      .selectFrom("agents as a")
      .leftJoin("agent_publications as p", (join) =>
        join
          .onRef("p.workspace_id", "=", "a.workspace_id")
          .onRef("p.agent_id", "=", "a.id")
          .on("p.version", "=", version ?? sql<number>`a.latest_version`),
      )
      .selectAll("a")
      .select([
        "p.version as p_version",
        "p.fingerprint as p_fingerprint",
        "p.definition_json as p_definition_json",
        "p.created_at as p_created_at",
        "p.registered_at as p_registered_at",
      ])
      .where("a.workspace_id", "=", workspaceId)
      .where("a.id", "=", agentId)
      .executeTakeFirst();
    if (!row) return null;
    const head = toHead(row);
    if (row.p_version === null || row.p_fingerprint === null || row.p_definition_json === null)
      return { head, publication: null, registeredAt: null };
    return {
      head,
      publication: {
        workspaceId,
        agentId,
        version: Number(row.p_version),
        fingerprint: row.p_fingerprint,
        definition: fromJson<AgentDefinition>(row.p_definition_json),
        createdAt: Number(row.p_created_at),
      },
      registeredAt: row.p_registered_at === null ? null : Number(row.p_registered_at),
    };
  }

  async listAgents(
    workspaceId: string,
    q: AgentListQuery,
  ): Promise<Page<{ head: AgentHead; latest: StoredPublication }>> {
    const cursor = decodeCursor("agents", q.cursor);
    let query = this.db
      .selectFrom("agents")
      .innerJoin("agent_publications", (join) =>
        join
          .onRef("agent_publications.agent_id", "=", "agents.id")
          .onRef("agent_publications.version", "=", "agents.latest_version"),
      )
      .selectAll("agents")
      .select([
        "agent_publications.fingerprint",
        "agent_publications.definition_json",
        "agent_publications.created_at as published_at",
      ])
      .where("agents.workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("agents.archived_at", "is", null);
    if (q.createdAt?.gte !== undefined) query = query.where("agents.created_at", ">=", q.createdAt.gte);
    if (q.createdAt?.lte !== undefined) query = query.where("agents.created_at", "<=", q.createdAt.lte);
    if (cursor && typeof cursor.id === "string") query = query.where("agents.id", "<", cursor.id);
    const rows = await query
      .orderBy("agents.id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map((row) => {
      const head = toHead(row);
      return {
        head,
        latest: {
          workspaceId: head.workspaceId,
          agentId: head.id,
          version: head.latestVersion,
          fingerprint: row.fingerprint,
          definition: fromJson<AgentDefinition>(row.definition_json),
          createdAt: Number(row.published_at),
        },
      };
    });
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("agents", { id: last.head.id }) : null,
    };
  }

  async listVersions(workspaceId: string, agentId: string, q: ListQuery): Promise<Page<StoredPublication>> {
    const cursor = decodeCursor("agent_versions", q.cursor);
    let query = this.db
      .selectFrom("agent_publications")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("agent_id", "=", agentId);
    if (cursor && typeof cursor.version === "number") query = query.where("version", "<", cursor.version);
    const rows = await query
      .orderBy("version", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toPublication);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > q.limit && last ? encodeCursor("agent_versions", { version: last.version }) : null,
    };
  }

  async archive(workspaceId: string, agentId: string, now: number, audit: AdminAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const archived = await tx
        .updateTable("agents")
        .set({ archived_at: now, updated_at: now })
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", agentId)
        .where("archived_at", "is", null)
        .executeTakeFirst();
      if (Number(archived.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  async markRegistered(workspaceId: string, agentId: string, version: number, at: number): Promise<void> {
    await this.db
      .updateTable("agent_publications")
      .set({ registered_at: at, registration_error: null })
      .where("workspace_id", "=", workspaceId)
      .where("agent_id", "=", agentId)
      .where("version", "=", version)
      .where("registered_at", "is", null)
      .execute();
  }

  async markRegistrationRefused(
    workspaceId: string,
    agentId: string,
    version: number,
    message: string,
  ): Promise<void> {
    await this.db
      .updateTable("agent_publications")
      .set({ registered_at: null, registration_error: message })
      .where("workspace_id", "=", workspaceId)
      .where("agent_id", "=", agentId)
      .where("version", "=", version)
      .execute();
  }

  async listUnregistered(limit: number, after?: StoredPublication): Promise<StoredPublication[]> {
    let query = this.db
      .selectFrom("agent_publications")
      .selectAll()
      .where("registered_at", "is", null)
      .where("registration_error", "is", null);
    if (after) {
      query = query.where((eb) =>
        eb(
          eb.refTuple("created_at", "workspace_id", "agent_id", "version"),
          ">",
          eb.tuple(after.createdAt, after.workspaceId, after.agentId, after.version),
        ),
      );
    }
    const rows = await query
      .orderBy("created_at")
      .orderBy("workspace_id")
      .orderBy("agent_id")
      .orderBy("version")
      .limit(limit)
      .execute();
    return rows.map(toPublication);
  }

  async markAllUnregistered(): Promise<number> {
    const result = await this.db
      .updateTable("agent_publications")
      .set({ registered_at: null })
      .where("registered_at", "is not", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}

function publicationRow(p: StoredPublication): Insertable<Database["agent_publications"]> {
  return {
    workspace_id: p.workspaceId,
    agent_id: p.agentId,
    version: p.version,
    fingerprint: p.fingerprint,
    definition_json: toJson(p.definition),
    created_at: p.createdAt,
  };
}

function toHead(row: Database["agents"]): AgentHead {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    latestVersion: Number(row.latest_version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    archivedAt: row.archived_at === null ? null : Number(row.archived_at),
  };
}

function toPublication(row: Selectable<Database["agent_publications"]>): StoredPublication {
  return {
    workspaceId: row.workspace_id,
    agentId: row.agent_id,
    version: Number(row.version),
    fingerprint: row.fingerprint,
    definition: fromJson<AgentDefinition>(row.definition_json),
    createdAt: Number(row.created_at),
  };
}
