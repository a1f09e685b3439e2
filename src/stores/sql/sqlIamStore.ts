import type { Selectable } from "kysely";
import { isApiKeyRole } from "../../control/apiKeyRoles.js";
import type { ApiKeyRecord, IamStore } from "../../control/ports.js";
import type { Db } from "./db.js";
import type { Database } from "./schema.js";
import { SqlInstallationFacts } from "./sqlInstallationFacts.js";

export class SqlIamStore implements IamStore {
  private readonly facts: SqlInstallationFacts;

  constructor(private readonly db: Db) {
    this.facts = new SqlInstallationFacts(db);
  }

  claimBootstrapKey(keyHash: string, now: number): Promise<string> {
    return this.facts.claim("bootstrap_api_key", keyHash, now);
  }

  async ensureWorkspace(id: string, name: string, now: number): Promise<void> {
    await this.db
      .insertInto("workspaces")
      .values({ id, name, created_at: now })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  async addApiKey(r: ApiKeyRecord): Promise<void> {
    await this.db
      .insertInto("api_keys")
      .values({
        id: r.id,
        workspace_id: r.workspaceId,
        key_hash: r.keyHash,
        label: r.label,
        role: r.role,
        agent_ids: r.agentIds === null ? null : JSON.stringify(r.agentIds),
        created_at: r.createdAt,
        revoked_at: r.revokedAt,
      })
      .onConflict((oc) => oc.column("key_hash").doNothing())
      .execute();
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("key_hash", "=", keyHash)
      .executeTakeFirst();
    return row ? apiKeyOf(row) : null;
  }

  async findApiKey(workspaceId: string, id: string): Promise<ApiKeyRecord | null> {
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? apiKeyOf(row) : null;
  }

  async listApiKeys(workspaceId: string, limit: number, afterId: string | null): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom("api_keys").selectAll().where("workspace_id", "=", workspaceId);
    if (afterId !== null) query = query.where("id", ">", afterId);
    const rows = await query.orderBy("id").limit(limit).execute();
    return rows.map(apiKeyOf);
  }

  async revokeApiKey(workspaceId: string, id: string, now: number): Promise<ApiKeyRecord | null> {
    await this.db
      .updateTable("api_keys")
      .set({ revoked_at: now })
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .where("revoked_at", "is", null)
      .execute();
    return this.findApiKey(workspaceId, id);
  }
}

function apiKeyOf(row: Selectable<Database["api_keys"]>): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    keyHash: row.key_hash,
    label: row.label,
    // A value written by another build is read as the least power, never as more.
    role: isApiKeyRole(row.role) ? row.role : "runtime",
    agentIds: agentIdsOf(row.agent_ids),
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** A list that does not parse as one reaches no agent, never every agent. */
function agentIdsOf(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed.filter((id): id is string => typeof id === "string");
  } catch {
    // fall through
  }
  return [];
}
