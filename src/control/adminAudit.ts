import { fingerprint } from "../kernel/canonicalJson.js";
import { newId } from "../kernel/ids.js";
import type { ListQuery, Page } from "../kernel/pagination.js";

/**
 * Who made an admin change: the API key's id (`key_…`; an access token acts as its minting key), or
 * one of the local actors: `bootstrap` (a server start registering the operator's key and the
 * default workspace), `embedded` (the in-process client of `openAwaken`), `system` (the server
 * itself: a workspace's default environment, an `mcp_oauth` refresh), `cli` (a local admin command
 * that writes to the database directly: `awaken secrets reseal`). The `awaken` commands that go
 * through the HTTP API (`api-keys`, `environment-keys`) act with a key, so their entries carry its id.
 */
export type AuditActorName = string;

/** The workspace a change lands in and who made it: what every audited write path takes. */
export interface Actor {
  workspaceId: string;
  actor: AuditActorName;
}

export const AUDIT_RESOURCE_TYPES = [
  "agent",
  "environment",
  "environment_key",
  "vault",
  "credential",
  "api_key",
  "workspace",
  "data_subject",
  "deployment",
  "tunnel",
  "tunnel_certificate",
  "user_profile",
  "webhook_endpoint",
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

/**
 * `rotate` is a credential's new revision (new auth); `update` changes no secret-bearing field;
 * `reseal` is a revision's seal moved to the current master key (`awaken secrets reseal`); `consent`
 * records a data subject's consent to a purpose (granted or withdrawn); `erase` removes a data
 * subject's captured content (its digest is of the erasure's counts); `reveal` answered a secret to
 * its caller (a tunnel's connector token: the entry names the token's id, never its value).
 */
export const AUDIT_ACTIONS = [
  "create",
  "update",
  "rotate",
  "reseal",
  "archive",
  "delete",
  "revoke",
  "consent",
  "erase",
  "reveal",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * One admin change, committed in the transaction of the change itself. Digests are SHA-256 of the
 * canonical JSON of the secret-free view (what a listing shows); never secret material or a key.
 */
export interface AdminAuditEntry {
  id: string;
  workspaceId: string;
  actor: AuditActorName;
  action: AuditAction;
  resourceType: AuditResourceType;
  resourceId: string;
  /** The version (agent), revision (environment, credential) the change left current, if any. */
  revision: number | null;
  beforeDigest: string | null;
  afterDigest: string | null;
  createdAt: number;
}

export interface AdminAuditQuery extends ListQuery {
  resourceType?: AuditResourceType | undefined;
  resourceId?: string | undefined;
  action?: AuditAction | undefined;
}

/** The admin audit's read side: a workspace's entries, newest first. The write side is each store's. */
export interface AdminAuditReader {
  list(workspaceId: string, query: AdminAuditQuery): Promise<Page<AdminAuditEntry>>;
}

/** The digest of a secret-free view; callers pass the view, never a record holding secrets. */
export function auditDigest(view: unknown): string {
  return fingerprint(view);
}

export function auditEntry(
  by: Actor,
  change: {
    action: AuditAction;
    resourceType: AuditResourceType;
    resourceId: string;
    revision?: number | null;
    before: unknown;
    after: unknown;
    at: number;
  },
): AdminAuditEntry {
  return {
    id: newId("aud", change.at),
    workspaceId: by.workspaceId,
    actor: by.actor,
    action: change.action,
    resourceType: change.resourceType,
    resourceId: change.resourceId,
    revision: change.revision ?? null,
    beforeDigest: change.before === null ? null : auditDigest(change.before),
    afterDigest: change.after === null ? null : auditDigest(change.after),
    createdAt: change.at,
  };
}
