import type { AdminAuditEntry, AuditResourceType } from "../../src/control/adminAudit.js";
import { newId } from "../../src/kernel/ids.js";

/** An audit entry for store tests that write directly: a fresh id each call. */
export function testAudit(
  resourceType: AuditResourceType = "credential",
  workspaceId = "wrkspc_test",
): AdminAuditEntry {
  const now = Date.now();
  return {
    id: newId("aud", now),
    workspaceId,
    actor: "cli",
    action: "update",
    resourceType,
    resourceId: "test",
    revision: null,
    beforeDigest: null,
    afterDigest: null,
    createdAt: now,
  };
}
