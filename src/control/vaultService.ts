import type { Clock } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { Page } from "../kernel/pagination.js";
import { type Actor, type AuditAction, auditEntry } from "./adminAudit.js";
import type { VaultListQuery, VaultRecord, VaultStore } from "./vaultPorts.js";

export interface UpdateVaultCommand {
  displayName?: string | null | undefined;
  metadata?: Record<string, string | null> | null | undefined;
}

/** Vaults: named, workspace-scoped collections of credentials (wire §2.7, §5). No secrets here. */
export class VaultService {
  constructor(
    private readonly store: VaultStore,
    private readonly clock: Clock,
  ) {}

  async create(
    by: Actor,
    cmd: { displayName: string; metadata: Record<string, string> },
  ): Promise<VaultRecord> {
    const now = this.clock.now();
    const vault: VaultRecord = {
      id: newId("vlt", now),
      workspaceId: by.workspaceId,
      displayName: cmd.displayName,
      metadata: cmd.metadata,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    await this.store.create(vault, vaultAudit(by, "create", null, vault, now));
    return vault;
  }

  async get(workspaceId: string, vaultId: string): Promise<VaultRecord> {
    const vault = await this.store.get(workspaceId, vaultId);
    if (!vault) throw notFound("vault", vaultId);
    return vault;
  }

  /** A vault credentials may be added to or changed in: present and not archived. */
  async getWritable(workspaceId: string, vaultId: string): Promise<VaultRecord> {
    const vault = await this.get(workspaceId, vaultId);
    if (vault.archivedAt !== null) {
      throw new AwakenError(
        "vault_archived",
        `vault ${vaultId} is archived: its credentials can be read, archived or deleted, not added or changed`,
      );
    }
    return vault;
  }

  async update(by: Actor, vaultId: string, cmd: UpdateVaultCommand): Promise<VaultRecord> {
    const current = await this.getWritable(by.workspaceId, vaultId);
    const now = this.clock.now();
    const next: VaultRecord = {
      ...current,
      // A vault always has a name: null means "leave it".
      displayName: cmd.displayName ?? current.displayName,
      metadata: applyMetadataPatch(current.metadata, cmd.metadata),
      updatedAt: now,
    };
    if (!(await this.store.update(next, vaultAudit(by, "update", current, next, now)))) {
      throw notFound("vault", vaultId);
    }
    return next;
  }

  list(workspaceId: string, query: VaultListQuery): Promise<Page<VaultRecord>> {
    return this.store.list(workspaceId, query);
  }

  async archive(by: Actor, vaultId: string): Promise<VaultRecord> {
    const current = await this.get(by.workspaceId, vaultId);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const next = { ...current, archivedAt: now, updatedAt: now };
    if (!(await this.store.update(next, vaultAudit(by, "archive", current, next, now)))) {
      throw notFound("vault", vaultId);
    }
    return next;
  }

  /** Deletes the vault with its credentials (one audit entry, for the vault). */
  async delete(by: Actor, vaultId: string): Promise<void> {
    const current = await this.get(by.workspaceId, vaultId);
    const now = this.clock.now();
    if (
      !(await this.store.delete(by.workspaceId, vaultId, now, vaultAudit(by, "delete", current, null, now)))
    ) {
      throw notFound("vault", vaultId);
    }
  }
}

function vaultAudit(
  by: Actor,
  action: AuditAction,
  before: VaultRecord | null,
  after: VaultRecord | null,
  at: number,
) {
  const resourceId = (after ?? before)?.id ?? "";
  return auditEntry(by, { action, resourceType: "vault", resourceId, before, after, at });
}
