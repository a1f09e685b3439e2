import type { CredentialOpenRecord, CredentialRevision } from "../../control/vaultPorts.js";
import { isoTime } from "../../kernel/clock.js";

// Wire projections of a credential's revisions and of the custody audit (Awaken extensions). A
// revision shows its secret-free auth and the names of its sealed fields; the seal never leaves.

export function credentialRevisionDto(r: CredentialRevision): Record<string, unknown> {
  return {
    type: "vault_credential_revision",
    credential_id: r.credentialId,
    revision: r.revision,
    auth: r.auth,
    secret_fields: r.secretFields,
    created_at: isoTime(r.createdAt),
  };
}

export function credentialOpenDto(o: CredentialOpenRecord): Record<string, unknown> {
  return {
    type: "credential_open",
    id: o.id,
    // An operator's validation probe opens for no session or run: stored as "", shown as null.
    session_id: o.sessionId === "" ? null : o.sessionId,
    run_id: o.runId === "" ? null : o.runId,
    holder: o.holder,
    owner: o.owner,
    epoch: o.epoch,
    vault_id: o.vaultId,
    credential_id: o.credentialId,
    revision: o.revision,
    usage_key: o.usageKey,
    outcome: o.outcome,
    reason: o.reason,
    refreshed_to: o.refreshedTo,
    created_at: isoTime(o.createdAt),
  };
}
