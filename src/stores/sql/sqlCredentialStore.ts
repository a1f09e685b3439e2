import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type {
  CreateCredentialResult,
  CredentialHead,
  CredentialRevision,
  CredentialStore,
  CredentialView,
  SealedRevisionCursor,
  SealedRevisionRow,
  SealedRevisionStore,
  VaultListQuery,
} from "../../control/vaultPorts.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";
import { headRow, revisionRow, toHead, toRevision } from "./credentialRows.js";
import { type Db, decodeCursor, encodeCursor } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";

/**
 * Credential heads and their immutable revisions. Dialect-neutral: the only decision under
 * concurrency (which rotation wins) is one conditional UPDATE of the head, and the one-live-credential
 * rule is a unique index, so neither backend needs explicit locks.
 */
export class SqlCredentialStore implements CredentialStore, SealedRevisionStore {
  constructor(private readonly db: Db) {}

  async create(
    head: CredentialHead,
    first: CredentialRevision,
    audit: AdminAuditEntry,
  ): Promise<CreateCredentialResult> {
    // The partial unique index (one live credential per usage) is the check: a taken slot inserts
    // nothing, and the revision and audit are not written either.
    const created = await this.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto("vault_credentials")
        .values(headRow(head))
        .onConflict((oc) =>
          oc
            .columns(["vault_id", "usage_key"])
            .where("archived_at", "is", null)
            .where("deleted_at", "is", null)
            .doNothing(),
        )
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
      await tx.insertInto("vault_credential_revisions").values(revisionRow(first)).execute();
      await writeAudit(tx, audit);
      return true;
    });
    if (created) return { created: true };
    const existing = await this.db
      .selectFrom("vault_credentials")
      .select("id")
      .where("vault_id", "=", head.vaultId)
      .where("usage_key", "=", head.usageKey)
      .where("archived_at", "is", null)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return { created: false, conflictWith: existing?.id ?? null };
  }

  async get(workspaceId: string, vaultId: string, credentialId: string): Promise<CredentialView | null> {
    const row = await this.selectViews(workspaceId, vaultId)
      .where("vault_credentials.id", "=", credentialId)
      .executeTakeFirst();
    return row ? toView(row) : null;
  }

  async getRevision(
    workspaceId: string,
    credentialId: string,
    revision: number,
  ): Promise<CredentialRevision | null> {
    const row = await this.db
      .selectFrom("vault_credential_revisions")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("credential_id", "=", credentialId)
      .where("revision", "=", revision)
      .executeTakeFirst();
    return row ? toRevision(row) : null;
  }

  async appendRevision(
    head: CredentialHead,
    revision: CredentialRevision,
    expectedLatest: number,
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      // Head first: on PostgreSQL a concurrent rotation waits on this row lock and then finds the
      // head moved (0 rows) instead of colliding on the revision's primary key.
      const { id, workspace_id, vault_id, created_at, deleted_at, ...changes } = headRow(head);
      const moved = await tx
        .updateTable("vault_credentials")
        .set(changes)
        .where("id", "=", id)
        .where("workspace_id", "=", workspace_id)
        .where("latest_revision", "=", expectedLatest)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await tx.insertInto("vault_credential_revisions").values(revisionRow(revision)).execute();
      await writeAudit(tx, audit);
      return true;
    });
  }

  async updateHead(head: CredentialHead, audit: AdminAuditEntry): Promise<boolean> {
    const { id, workspace_id, vault_id, created_at, deleted_at, latest_revision, ...changes } = headRow(head);
    return this.db.transaction().execute(async (tx) => {
      const updated = await tx
        .updateTable("vault_credentials")
        .set(changes)
        .where("id", "=", id)
        .where("workspace_id", "=", workspace_id)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  async list(workspaceId: string, vaultId: string, q: VaultListQuery): Promise<Page<CredentialView>> {
    const cursor = decodeCursor("vault_credentials", q.cursor);
    let query = this.selectViews(workspaceId, vaultId);
    if (!q.includeArchived) query = query.where("vault_credentials.archived_at", "is", null);
    if (cursor && typeof cursor.id === "string") query = query.where("vault_credentials.id", "<", cursor.id);
    const rows = await query
      .orderBy("vault_credentials.id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toView);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > q.limit && last ? encodeCursor("vault_credentials", { id: last.head.id }) : null,
    };
  }

  async listRevisions(
    workspaceId: string,
    credentialId: string,
    q: ListQuery,
  ): Promise<Page<CredentialRevision>> {
    const cursor = decodeCursor("credential_revisions", q.cursor);
    let query = this.db
      .selectFrom("vault_credential_revisions")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("credential_id", "=", credentialId);
    if (cursor && typeof cursor.revision === "number") query = query.where("revision", "<", cursor.revision);
    const rows = await query
      .orderBy("revision", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toRevision);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > q.limit && last
          ? encodeCursor("credential_revisions", { revision: last.revision })
          : null,
    };
  }

  async delete(
    workspaceId: string,
    vaultId: string,
    credentialId: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx
        .updateTable("vault_credentials")
        .set({ deleted_at: now, updated_at: now })
        .where("workspace_id", "=", workspaceId)
        .where("vault_id", "=", vaultId)
        .where("id", "=", credentialId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      // Erasing the sealed revisions is what makes a delete final: the material is gone, not hidden.
      await tx.deleteFrom("vault_credential_revisions").where("credential_id", "=", credentialId).execute();
      await writeAudit(tx, audit);
      return true;
    });
  }

  async countByMasterKey(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom("vault_credential_revisions")
      .select(["master_key_id", (eb) => eb.fn.countAll().as("n")])
      .groupBy("master_key_id")
      .execute();
    return new Map(rows.map((r) => [r.master_key_id, Number(r.n)]));
  }

  async listSealedNotUnder(
    keyId: string,
    after: SealedRevisionCursor | null,
    limit: number,
  ): Promise<SealedRevisionRow[]> {
    let query = this.db
      .selectFrom("vault_credential_revisions")
      .select([
        "credential_id",
        "revision",
        "workspace_id",
        "seal_format",
        "master_key_id",
        "wrapped_key",
        "sealed_material",
      ])
      .where("master_key_id", "<>", keyId);
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb("credential_id", ">", after.credentialId),
          eb.and([eb("credential_id", "=", after.credentialId), eb("revision", ">", after.revision)]),
        ]),
      );
    }
    const rows = await query.orderBy("credential_id").orderBy("revision").limit(limit).execute();
    return rows.map((r) => ({
      // The row's own identity columns: the seal is bound to them, and re-sealed for them.
      credentialId: r.credential_id,
      revision: Number(r.revision),
      workspaceId: r.workspace_id,
      sealed: {
        format: Number(r.seal_format),
        masterKeyId: r.master_key_id,
        wrappedKey: Buffer.from(r.wrapped_key, "base64"),
        ciphertext: Buffer.from(r.sealed_material, "base64"),
      },
    }));
  }

  async replaceSealed(
    current: SealedRevisionRow,
    next: SealedRevisionRow["sealed"],
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx
        .updateTable("vault_credential_revisions")
        .set({
          seal_format: next.format,
          master_key_id: next.masterKeyId,
          wrapped_key: next.wrappedKey.toString("base64"),
          sealed_material: next.ciphertext.toString("base64"),
        })
        .where("credential_id", "=", current.credentialId)
        .where("revision", "=", current.revision)
        .where("workspace_id", "=", current.workspaceId)
        // Compare-and-swap on the seal read: a concurrent re-seal (or anything else) wins, never both.
        .where("seal_format", "=", current.sealed.format)
        .where("master_key_id", "=", current.sealed.masterKeyId)
        .where("wrapped_key", "=", current.sealed.wrappedKey.toString("base64"))
        .where("sealed_material", "=", current.sealed.ciphertext.toString("base64"))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  /** Live heads of one vault joined with their latest revision. */
  private selectViews(workspaceId: string, vaultId: string) {
    return this.db
      .selectFrom("vault_credentials")
      .innerJoin("vault_credential_revisions", (join) =>
        join
          .onRef("vault_credential_revisions.credential_id", "=", "vault_credentials.id")
          .onRef("vault_credential_revisions.revision", "=", "vault_credentials.latest_revision"),
      )
      .selectAll("vault_credentials")
      .select([
        "vault_credential_revisions.credential_id",
        "vault_credential_revisions.revision",
        "vault_credential_revisions.workspace_id as revision_workspace_id",
        "vault_credential_revisions.auth_json",
        "vault_credential_revisions.secret_fields_json",
        "vault_credential_revisions.seal_format",
        "vault_credential_revisions.master_key_id",
        "vault_credential_revisions.wrapped_key",
        "vault_credential_revisions.sealed_material",
        "vault_credential_revisions.created_at as revision_created_at",
      ])
      .where("vault_credentials.workspace_id", "=", workspaceId)
      .where("vault_credentials.vault_id", "=", vaultId)
      .where("vault_credentials.deleted_at", "is", null);
  }
}

type ViewRow = Awaited<ReturnType<ReturnType<SqlCredentialStore["selectViews"]>["executeTakeFirstOrThrow"]>>;

function toView(row: ViewRow): CredentialView {
  return {
    head: toHead(row),
    // The revision's own columns: its identity is what its seal is bound to, not the head's.
    revision: toRevision({
      ...row,
      workspace_id: row.revision_workspace_id,
      created_at: row.revision_created_at,
    }),
  };
}
