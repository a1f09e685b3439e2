import type { CredentialValidation } from "../../control/credentialService.js";
import type { CredentialView, VaultRecord } from "../../control/vaultPorts.js";
import { isoTime } from "../../kernel/clock.js";

// Projections of vaults and credentials to the wire (§5). A credential's `auth` is the revision's
// stored secret-free part; sealed material is not even reachable from these records' DTO fields.

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export function vaultDto(v: VaultRecord): Record<string, unknown> {
  return {
    id: v.id,
    type: "vault",
    display_name: v.displayName,
    metadata: v.metadata,
    created_at: isoTime(v.createdAt),
    updated_at: isoTime(v.updatedAt),
    archived_at: iso(v.archivedAt),
  };
}

export function credentialDto({ head, revision }: CredentialView): Record<string, unknown> {
  return {
    id: head.id,
    type: "vault_credential",
    vault_id: head.vaultId,
    display_name: head.displayName,
    auth: revision.auth,
    metadata: head.metadata,
    created_at: isoTime(head.createdAt),
    updated_at: isoTime(head.updatedAt),
    archived_at: iso(head.archivedAt),
  };
}

/**
 * No live probe is made yet (it needs the MCP holder), so `mcp_probe` and `refresh` are null: the
 * wire's way of saying nothing was attempted.
 */
export function validationDto(v: CredentialValidation): Record<string, unknown> {
  return {
    type: "vault_credential_validation",
    credential_id: v.credentialId,
    vault_id: v.vaultId,
    status: v.status,
    has_refresh_token: v.hasRefreshToken,
    mcp_probe: null,
    refresh: null,
    validated_at: isoTime(v.validatedAt),
  };
}
