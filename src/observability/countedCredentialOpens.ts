import type { CredentialOpenAudit } from "../control/vaultPorts.js";
import type { Metrics } from "../kernel/metrics.js";

/**
 * The credential open audit, counted as it records: every open and refusal of every holder (in
 * process or remote, the validation probe too) passes through it, so one place counts them all,
 * by holder kind and outcome only.
 */
export function countedCredentialOpens(audit: CredentialOpenAudit, metrics: Metrics): CredentialOpenAudit {
  return {
    async record(entry) {
      await audit.record(entry);
      metrics.credentialOpen(entry.holder, entry.outcome);
    },
    listForSession: (workspaceId, sessionId) => audit.listForSession(workspaceId, sessionId),
    list: (workspaceId, query) => audit.list(workspaceId, query),
    refreshedFrom: (workspaceId, credentialId, revision) =>
      audit.refreshedFrom(workspaceId, credentialId, revision),
  };
}
