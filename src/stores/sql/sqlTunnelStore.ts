import type { Selectable } from "kysely";
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type {
  TunnelCertificateRecord,
  TunnelListQuery,
  TunnelRecord,
  TunnelStore,
} from "../../coordinator/tunnels/ports.js";
import type { Page } from "../../kernel/pagination.js";
import { begin, type Db, decodeCursor, encodeCursor, type SqlDialect, type Tx } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";
import type { TunnelTables } from "./tables/tunnelTables.js";

type TunnelRow = Selectable<TunnelTables["tunnels"]>;
type CertificateRow = Selectable<TunnelTables["tunnel_certificates"]>;

const ms = (v: number | null): number | null => (v === null ? null : Number(v));

function toTunnel(r: TunnelRow): TunnelRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    displayName: r.display_name,
    domain: r.domain,
    tokenId: r.token_id,
    tokenHash: r.token_hash,
    tokenSealed: r.token_sealed,
    createdAt: Number(r.created_at),
    archivedAt: ms(r.archived_at),
  };
}

function toCertificate(r: CertificateRow): TunnelCertificateRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    tunnelId: r.tunnel_id,
    pem: r.pem,
    fingerprint: r.fingerprint,
    expiresAt: ms(r.expires_at),
    createdAt: Number(r.created_at),
    archivedAt: ms(r.archived_at),
  };
}

/** Tunnels and their CA certificates; each change and its audit entry in one transaction. */
export class SqlTunnelStore implements TunnelStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect,
  ) {}

  async create(t: TunnelRecord, audit: AdminAuditEntry): Promise<void> {
    await begin(this.db, this.dialect).execute(async (tx) => {
      await tx
        .insertInto("tunnels")
        .values({
          id: t.id,
          workspace_id: t.workspaceId,
          display_name: t.displayName,
          domain: t.domain,
          token_id: t.tokenId,
          token_hash: t.tokenHash,
          token_sealed: t.tokenSealed,
          created_at: t.createdAt,
          archived_at: t.archivedAt,
        })
        .execute();
      await writeAudit(tx, audit);
    });
  }

  async get(workspaceId: string, id: string): Promise<TunnelRecord | null> {
    const row = await this.db
      .selectFrom("tunnels")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toTunnel(row) : null;
  }

  async findLiveByTokenHash(tokenHash: string): Promise<TunnelRecord | null> {
    const row = await this.db
      .selectFrom("tunnels")
      .selectAll()
      .where("token_hash", "=", tokenHash)
      .where("archived_at", "is", null)
      .executeTakeFirst();
    return row ? toTunnel(row) : null;
  }

  async findByDomain(workspaceId: string, domain: string): Promise<TunnelRecord | null> {
    const row = await this.db
      .selectFrom("tunnels")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("domain", "=", domain)
      .executeTakeFirst();
    return row ? toTunnel(row) : null;
  }

  async list(workspaceId: string, q: TunnelListQuery): Promise<Page<TunnelRecord>> {
    const cursor = decodeCursor("tunnels", q.cursor);
    let query = this.db.selectFrom("tunnels").selectAll().where("workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toTunnel), q.limit, "tunnels");
  }

  archive(workspaceId: string, id: string, at: number, audit: AdminAuditEntry): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const tunnel = await this.lockLive(tx, workspaceId, id);
      if (!tunnel) return false;
      await tx.updateTable("tunnels").set({ archived_at: at }).where("id", "=", id).execute();
      // Every live certificate goes with it, in the same operation (SDK).
      await tx
        .updateTable("tunnel_certificates")
        .set({ archived_at: at })
        .where("tunnel_id", "=", id)
        .where("archived_at", "is", null)
        .execute();
      await writeAudit(tx, audit);
      return true;
    });
  }

  rotateToken(
    workspaceId: string,
    id: string,
    token: { tokenId: string; tokenHash: string; tokenSealed: string },
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const tunnel = await this.lockLive(tx, workspaceId, id);
      if (!tunnel) return false;
      await tx
        .updateTable("tunnels")
        .set({ token_id: token.tokenId, token_hash: token.tokenHash, token_sealed: token.tokenSealed })
        .where("id", "=", id)
        .execute();
      await writeAudit(tx, audit);
      return true;
    });
  }

  addCertificate(
    c: TunnelCertificateRecord,
    maxLive: number,
    audit: AdminAuditEntry,
  ): Promise<"added" | "tunnel_missing" | "tunnel_archived" | "full"> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const tunnel = await this.lock(tx, c.workspaceId, c.tunnelId);
      if (!tunnel) return "tunnel_missing";
      if (tunnel.archived_at !== null) return "tunnel_archived";
      const live = await tx
        .selectFrom("tunnel_certificates")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("tunnel_id", "=", c.tunnelId)
        .where("archived_at", "is", null)
        .executeTakeFirstOrThrow();
      if (Number(live.n) >= maxLive) return "full";
      await tx
        .insertInto("tunnel_certificates")
        .values({
          id: c.id,
          workspace_id: c.workspaceId,
          tunnel_id: c.tunnelId,
          pem: c.pem,
          fingerprint: c.fingerprint,
          expires_at: c.expiresAt,
          created_at: c.createdAt,
          archived_at: c.archivedAt,
        })
        .execute();
      await writeAudit(tx, audit);
      return "added";
    });
  }

  async getCertificate(
    workspaceId: string,
    tunnelId: string,
    id: string,
  ): Promise<TunnelCertificateRecord | null> {
    const row = await this.db
      .selectFrom("tunnel_certificates")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("tunnel_id", "=", tunnelId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toCertificate(row) : null;
  }

  async listCertificates(
    workspaceId: string,
    tunnelId: string,
    q: TunnelListQuery,
  ): Promise<Page<TunnelCertificateRecord>> {
    const cursor = decodeCursor("tunnel_certificates", q.cursor);
    let query = this.db
      .selectFrom("tunnel_certificates")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("tunnel_id", "=", tunnelId);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toCertificate), q.limit, "tunnel_certificates");
  }

  async liveCertificates(tunnelId: string): Promise<TunnelCertificateRecord[]> {
    const rows = await this.db
      .selectFrom("tunnel_certificates")
      .selectAll()
      .where("tunnel_id", "=", tunnelId)
      .where("archived_at", "is", null)
      .orderBy("id", "asc")
      .execute();
    return rows.map(toCertificate);
  }

  async recordAudit(audit: AdminAuditEntry): Promise<void> {
    await writeAudit(this.db, audit);
  }

  archiveCertificate(
    workspaceId: string,
    tunnelId: string,
    id: string,
    at: number,
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const result = await tx
        .updateTable("tunnel_certificates")
        .set({ archived_at: at })
        .where("workspace_id", "=", workspaceId)
        .where("tunnel_id", "=", tunnelId)
        .where("id", "=", id)
        .where("archived_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  private async lock(tx: Tx, workspaceId: string, id: string): Promise<TunnelRow | undefined> {
    let query = tx
      .selectFrom("tunnels")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id);
    if (this.dialect === "postgres") query = query.forUpdate();
    return query.executeTakeFirst();
  }

  private async lockLive(tx: Tx, workspaceId: string, id: string): Promise<TunnelRow | null> {
    const row = await this.lock(tx, workspaceId, id);
    return row && row.archived_at === null ? row : null;
  }
}

function pageOf<T extends { id: string }>(rows: T[], limit: number, list: string): Page<T> {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(list, { id: last.id }) : null };
}
