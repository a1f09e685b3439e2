import type { AdminAuditEntry, AdminAuditQuery, AdminAuditReader } from "../../control/adminAudit.js";
import type { Page } from "../../kernel/pagination.js";
import { encodeCursor } from "./db.js";

/**
 * One newest-first audit over several stores that each write their own changes' entries in the
 * change's transaction: a split deployment's Control (agents, vaults, keys, consent) and
 * Coordinator (environments, erasures). Each source pages by the same (created_at, id) cursor, so
 * a page is the newest `limit` of the sources' newest `limit` each, and its last entry is where
 * every source resumes.
 */
export class MergedAdminAudit implements AdminAuditReader {
  constructor(private readonly sources: readonly AdminAuditReader[]) {}

  async list(workspaceId: string, query: AdminAuditQuery): Promise<Page<AdminAuditEntry>> {
    const pages = await Promise.all(this.sources.map((source) => source.list(workspaceId, query)));
    const merged = pages
      .flatMap((page) => page.data)
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const data = merged.slice(0, query.limit);
    const more = merged.length > query.limit || pages.some((page) => page.nextCursor !== null);
    const last = data.at(-1);
    return {
      data,
      nextCursor: more && last ? encodeCursor("admin_audit", { at: last.createdAt, id: last.id }) : null,
    };
  }
}
