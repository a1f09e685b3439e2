import type { CredentialAuthType, PublicCredentialAuth } from "../../control/credentialAuth.js";
import type { CredentialHead, CredentialRevision, VaultRecord } from "../../control/vaultPorts.js";
import { fromJson, toJson } from "./db.js";
import type { Database } from "./schema.js";

// Row ↔ record mapping for vaults and credentials. The sealed record is stored as base64 text in its
// own columns; identity columns are the row's own, which is what opening binds against.

export function vaultRow(v: VaultRecord): Database["vaults"] {
  return {
    id: v.id,
    workspace_id: v.workspaceId,
    display_name: v.displayName,
    metadata_json: toJson(v.metadata),
    created_at: v.createdAt,
    updated_at: v.updatedAt,
    archived_at: v.archivedAt,
    deleted_at: null,
  };
}

export function toVault(r: Database["vaults"]): VaultRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    displayName: r.display_name,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
  };
}

export function headRow(h: CredentialHead): Database["vault_credentials"] {
  return {
    id: h.id,
    workspace_id: h.workspaceId,
    vault_id: h.vaultId,
    display_name: h.displayName,
    metadata_json: toJson(h.metadata),
    auth_type: h.authType,
    usage_key: h.usageKey,
    latest_revision: h.latestRevision,
    created_at: h.createdAt,
    updated_at: h.updatedAt,
    archived_at: h.archivedAt,
    deleted_at: null,
  };
}

export function toHead(r: Database["vault_credentials"]): CredentialHead {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    vaultId: r.vault_id,
    displayName: r.display_name,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    authType: r.auth_type as CredentialAuthType,
    usageKey: r.usage_key,
    latestRevision: Number(r.latest_revision),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
  };
}

export function revisionRow(r: CredentialRevision): Database["vault_credential_revisions"] {
  return {
    credential_id: r.credentialId,
    revision: r.revision,
    workspace_id: r.workspaceId,
    auth_json: toJson(r.auth),
    secret_fields_json: toJson(r.secretFields),
    seal_format: r.sealed.format,
    master_key_id: r.sealed.masterKeyId,
    wrapped_key: r.sealed.wrappedKey.toString("base64"),
    sealed_material: r.sealed.ciphertext.toString("base64"),
    created_at: r.createdAt,
  };
}

export function toRevision(r: Database["vault_credential_revisions"]): CredentialRevision {
  return {
    credentialId: r.credential_id,
    revision: Number(r.revision),
    workspaceId: r.workspace_id,
    auth: fromJson<PublicCredentialAuth>(r.auth_json),
    secretFields: fromJson<string[]>(r.secret_fields_json),
    sealed: {
      format: Number(r.seal_format),
      masterKeyId: r.master_key_id,
      wrappedKey: Buffer.from(r.wrapped_key, "base64"),
      ciphertext: Buffer.from(r.sealed_material, "base64"),
    },
    createdAt: Number(r.created_at),
  };
}
