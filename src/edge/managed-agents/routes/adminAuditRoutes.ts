import type { FastifyInstance } from "fastify";
import type { AdminAuditEntry } from "../../../control/adminAudit.js";
import { isoTime } from "../../../kernel/clock.js";
import { principalOf, type RouteAccess } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { pageDto } from "../dto.js";
import { listAdminAuditQuerySchema } from "../schemas/adminAudit.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";

const ADMIN: RouteAccess = { accepts: ["api_key"] };

/**
 * The admin audit, an Awaken extension (admin keys, see `routeRoles.ts`):
 * `GET /v1/awaken/audit?resource_type=&resource_id=&action=` → the workspace's changes, newest
 * first: who (a key id, or `bootstrap`, `cli`, `embedded`, `system`), what, when, and digests of the
 * secret-free view before and after. `awaken audit` calls it over HTTP.
 */
export function adminAuditRoutes(app: FastifyInstance, deps: Pick<EdgeServices, "adminAudit">): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/audit", { config: { access: ADMIN } }, async (request) => {
    const q = parseQuery(listAdminAuditQuerySchema, request.query);
    const page = await deps.adminAudit.list(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
      resourceType: q.resource_type,
      resourceId: q.resource_id,
      action: q.action,
    });
    return pageDto(page, adminAuditDto);
  });
}

export function adminAuditDto(e: AdminAuditEntry): Record<string, unknown> {
  return {
    type: "audit_entry",
    id: e.id,
    workspace_id: e.workspaceId,
    actor: e.actor,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    revision: e.revision,
    before_digest: e.beforeDigest,
    after_digest: e.afterDigest,
    created_at: isoTime(e.createdAt),
  };
}
