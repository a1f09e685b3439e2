import type { CredentialValidation } from "../../control/credentialService.js";
import type { CapturedHttpResponse } from "../../control/httpCapture.js";
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

/** The validation's report: bodies in it were scrubbed and cut where they were captured. */
export function validationDto(v: CredentialValidation): Record<string, unknown> {
  return {
    type: "vault_credential_validation",
    credential_id: v.credentialId,
    vault_id: v.vaultId,
    status: v.status,
    has_refresh_token: v.hasRefreshToken,
    mcp_probe: v.mcpProbe
      ? { method: v.mcpProbe.method, http_response: httpResponseDto(v.mcpProbe.httpResponse) }
      : null,
    refresh: v.refresh
      ? { status: v.refresh.status, http_response: httpResponseDto(v.refresh.httpResponse) }
      : null,
    validated_at: isoTime(v.validatedAt),
  };
}

function httpResponseDto(r: CapturedHttpResponse | null): Record<string, unknown> | null {
  if (!r) return null;
  return {
    status_code: r.statusCode,
    content_type: r.contentType,
    body: r.body,
    body_truncated: r.bodyTruncated,
  };
}
