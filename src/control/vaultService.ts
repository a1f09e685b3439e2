import type { Clock } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { Page } from "../kernel/pagination.js";
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
    workspaceId: string,
    cmd: { displayName: string; metadata: Record<string, string> },
  ): Promise<VaultRecord> {
    const now = this.clock.now();
    const vault: VaultRecord = {
      id: newId("vlt", now),
      workspaceId,
      displayName: cmd.displayName,
      metadata: cmd.metadata,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    await this.store.create(vault);
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

  async update(workspaceId: string, vaultId: string, cmd: UpdateVaultCommand): Promise<VaultRecord> {
    const current = await this.getWritable(workspaceId, vaultId);
    const next: VaultRecord = {
      ...current,
      // A vault always has a name: null means "leave it".
      displayName: cmd.displayName ?? current.displayName,
      metadata: applyMetadataPatch(current.metadata, cmd.metadata),
      updatedAt: this.clock.now(),
    };
    await this.store.update(next);
    return next;
  }

  list(workspaceId: string, query: VaultListQuery): Promise<Page<VaultRecord>> {
    return this.store.list(workspaceId, query);
  }

  async archive(workspaceId: string, vaultId: string): Promise<VaultRecord> {
    const current = await this.get(workspaceId, vaultId);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const next = { ...current, archivedAt: now, updatedAt: now };
    await this.store.update(next);
    return next;
  }

  async delete(workspaceId: string, vaultId: string): Promise<void> {
    if (!(await this.store.delete(workspaceId, vaultId, this.clock.now()))) throw notFound("vault", vaultId);
  }
}
