import type { CatalogStore, ExecutableAgentSnapshot, RegistrationReceipt } from "../../coordinator/ports.js";
import { type Db, fromJson, toJson } from "./db.js";

export class SqlCatalogStore implements CatalogStore {
  constructor(private readonly db: Db) {}

  async putIfAbsent(snapshot: ExecutableAgentSnapshot, registeredAt: number): Promise<RegistrationReceipt> {
    await this.db
      .insertInto("executable_agents")
      .values({
        workspace_id: snapshot.workspaceId,
        agent_id: snapshot.agentId,
        version: snapshot.version,
        fingerprint: snapshot.fingerprint,
        snapshot_json: toJson(snapshot),
        registered_at: registeredAt,
      })
      .onConflict((oc) => oc.columns(["workspace_id", "agent_id", "version"]).doNothing())
      .execute();
    const row = await this.db
      .selectFrom("executable_agents")
      .select(["fingerprint", "registered_at"])
      .where("workspace_id", "=", snapshot.workspaceId)
      .where("agent_id", "=", snapshot.agentId)
      .where("version", "=", snapshot.version)
      .executeTakeFirstOrThrow();
    return {
      workspaceId: snapshot.workspaceId,
      agentId: snapshot.agentId,
      version: snapshot.version,
      fingerprint: row.fingerprint,
      registeredAt: Number(row.registered_at),
    };
  }

  async get(workspaceId: string, agentId: string, version: number): Promise<ExecutableAgentSnapshot | null> {
    const row = await this.db
      .selectFrom("executable_agents")
      .select("snapshot_json")
      .where("workspace_id", "=", workspaceId)
      .where("agent_id", "=", agentId)
      .where("version", "=", version)
      .executeTakeFirst();
    return row ? fromJson<ExecutableAgentSnapshot>(row.snapshot_json) : null;
  }
}
