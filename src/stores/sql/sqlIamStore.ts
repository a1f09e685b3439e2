import type { ApiKeyRecord, IamStore } from "../../control/ports.js";
import type { Db } from "./db.js";
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
    if (!row) return null;
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      keyHash: row.key_hash,
      label: row.label,
      createdAt: Number(row.created_at),
      revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    };
  }
}
