import type { Selectable } from "kysely";
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import { isApiKeyRole } from "../../control/apiKeyRoles.js";
import type { ApiKeyRecord, IamStore, NewWorkspace } from "../../control/ports.js";
import type { Db, DbOrTx } from "./db.js";
import type { Database } from "./schema.js";
import { writeAudit } from "./sqlAdminAudit.js";
import { SqlInstallationFacts } from "./sqlInstallationFacts.js";

export class SqlIamStore implements IamStore {
  private readonly facts: SqlInstallationFacts;

  constructor(private readonly db: Db) {
    this.facts = new SqlInstallationFacts(db);
  }

  claimBootstrapKey(keyHash: string, now: number): Promise<string> {
    return this.facts.claim("bootstrap_api_key", keyHash, now);
  }

  async ensureWorkspace(workspace: NewWorkspace): Promise<void> {
    await this.db.transaction().execute((tx) => insertWorkspace(tx, workspace));
  }

  async addApiKey(r: ApiKeyRecord, audit: AdminAuditEntry, workspace?: NewWorkspace): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      if (workspace) await insertWorkspace(tx, workspace);
      if (!(await insertApiKey(tx, r))) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  async findApiKeyByHashes(keyHashes: readonly string[]): Promise<ApiKeyRecord | null> {
    if (keyHashes.length === 0) return null;
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("key_hash", "in", [...keyHashes])
      .executeTakeFirst();
    return row ? apiKeyOf(row) : null;
  }

  async rehashApiKey(
    id: string,
    from: string,
    to: { keyHash: string; hashScheme: string },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("api_keys")
      .set({ key_hash: to.keyHash, hash_scheme: to.hashScheme })
      .where("id", "=", id)
      .where("key_hash", "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  replaceBootstrapKey(from: string, to: string, now: number): Promise<boolean> {
    return this.facts.replace("bootstrap_api_key", from, to, now);
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

  async revokeApiKey(
    workspaceId: string,
    id: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<ApiKeyRecord | null> {
    await this.db.transaction().execute(async (tx) => {
      const revoked = await tx
        .updateTable("api_keys")
        .set({ revoked_at: now })
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (Number(revoked.numUpdatedRows) === 1) await writeAudit(tx, audit);
    });
    return this.findApiKey(workspaceId, id);
  }
}

function apiKeyOf(row: Selectable<Database["api_keys"]>): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    keyHash: row.key_hash,
    hashScheme: row.hash_scheme,
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

async function insertWorkspace(tx: DbOrTx, w: NewWorkspace): Promise<void> {
  const inserted = await tx
    .insertInto("workspaces")
    .values({ id: w.id, name: w.name, created_at: w.createdAt })
    .onConflict((oc) => oc.column("id").doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) await writeAudit(tx, w.audit);
}

/** False when a key with the same hash is stored already. */
async function insertApiKey(tx: DbOrTx, r: ApiKeyRecord): Promise<boolean> {
  const inserted = await tx
    .insertInto("api_keys")
    .values({
      id: r.id,
      workspace_id: r.workspaceId,
      key_hash: r.keyHash,
      hash_scheme: r.hashScheme,
      label: r.label,
      role: r.role,
      agent_ids: r.agentIds === null ? null : JSON.stringify(r.agentIds),
      created_at: r.createdAt,
      revoked_at: r.revokedAt,
    })
    .onConflict((oc) => oc.column("key_hash").doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}
