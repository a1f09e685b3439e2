import type {
  CredentialOpenAudit,
  CredentialOpenQuery,
  CredentialOpenRecord,
} from "../../control/vaultPorts.js";
import type { Page } from "../../kernel/pagination.js";
import { type Db, decodeCursor, encodeCursor } from "./db.js";
import type { Database } from "./schema.js";

/** The credential open audit (migration 004): one row per open or refusal, never material. */
export class SqlCredentialOpenAudit implements CredentialOpenAudit {
  constructor(private readonly db: Db) {}

  async record(e: CredentialOpenRecord): Promise<void> {
    await this.db
      .insertInto("credential_opens")
      .values({
        id: e.id,
        workspace_id: e.workspaceId,
        session_id: e.sessionId,
        run_id: e.runId,
        owner: e.owner,
        epoch: e.epoch,
        vault_id: e.vaultId,
        credential_id: e.credentialId,
        revision: e.revision,
        usage_key: e.usageKey,
        holder: e.holder,
        outcome: e.outcome,
        reason: e.reason,
        refreshed_to: e.refreshedTo,
        created_at: e.createdAt,
      })
      .execute();
  }

  async listForSession(workspaceId: string, sessionId: string): Promise<CredentialOpenRecord[]> {
    const rows = await this.db
      .selectFrom("credential_opens")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId)
      .orderBy("created_at", "asc")
      .orderBy("id", "asc")
      .execute();
    return rows.map(toRecord);
  }

  async list(workspaceId: string, q: CredentialOpenQuery): Promise<Page<CredentialOpenRecord>> {
    const cursor = decodeCursor("credential_opens", q.cursor);
    let query = this.db.selectFrom("credential_opens").selectAll().where("workspace_id", "=", workspaceId);
    if (q.credentialId !== undefined) query = query.where("credential_id", "=", q.credentialId);
    if (q.sessionId !== undefined) query = query.where("session_id", "=", q.sessionId);
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
    const data = rows.slice(0, q.limit).map(toRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > q.limit && last
          ? encodeCursor("credential_opens", { at: last.createdAt, id: last.id })
          : null,
    };
  }

  async refreshedFrom(workspaceId: string, credentialId: string, revision: number): Promise<number | null> {
    const row = await this.db
      .selectFrom("credential_opens")
      .select("refreshed_to")
      .where("workspace_id", "=", workspaceId)
      .where("credential_id", "=", credentialId)
      .where("revision", "=", revision)
      .where("outcome", "=", "refreshed")
      .orderBy("created_at", "desc")
      .executeTakeFirst();
    return row?.refreshed_to == null ? null : Number(row.refreshed_to);
  }
}

function toRecord(r: Database["credential_opens"]): CredentialOpenRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    sessionId: r.session_id,
    runId: r.run_id,
    owner: r.owner,
    epoch: Number(r.epoch),
    vaultId: r.vault_id,
    credentialId: r.credential_id,
    revision: Number(r.revision),
    usageKey: r.usage_key,
    holder: r.holder,
    outcome: r.outcome === "opened" || r.outcome === "refreshed" ? r.outcome : "refused",
    reason: r.reason,
    refreshedTo: r.refreshed_to === null ? null : Number(r.refreshed_to),
    createdAt: Number(r.created_at),
  };
}
