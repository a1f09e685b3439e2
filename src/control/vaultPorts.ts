import type { ListQuery, Page } from "../kernel/pagination.js";
import type { SealedSecret } from "../secrets/ports.js";
import type { AdminAuditEntry } from "./adminAudit.js";
import type { CredentialAuthType, PublicCredentialAuth } from "./credentialAuth.js";

/** A vault: a named collection of credentials in one workspace. */
export interface VaultRecord {
  id: string;
  workspaceId: string;
  displayName: string;
  metadata: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

/** The mutable head of a credential: naming, lifecycle, and which revision is current. */
export interface CredentialHead {
  id: string;
  workspaceId: string;
  vaultId: string;
  displayName: string | null;
  metadata: Record<string, string>;
  authType: CredentialAuthType;
  /** `mcp:<server url>` or `env:<name>`: one live credential per vault per usage. */
  usageKey: string;
  latestRevision: number;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

/**
 * One immutable revision: the secret-free auth in clear, and the secret fields sealed for exactly
 * (credential, revision, workspace). Rotation appends one; nothing ever updates one.
 */
export interface CredentialRevision {
  workspaceId: string;
  credentialId: string;
  revision: number;
  auth: PublicCredentialAuth;
  /** Names of the sealed fields (e.g. `refresh_token`), so callers need not open to know them. */
  secretFields: string[];
  sealed: SealedSecret;
  createdAt: number;
}

export interface CredentialView {
  head: CredentialHead;
  revision: CredentialRevision;
}

export type VaultListQuery = ListQuery & { includeArchived: boolean };

/**
 * Vault and credential writes take the admin audit entry of the change and commit it in the
 * change's own transaction, only when the change took effect.
 */
export interface VaultStore {
  create(vault: VaultRecord, audit: AdminAuditEntry): Promise<void>;
  /** Null when missing, deleted, or in another workspace. */
  get(workspaceId: string, vaultId: string): Promise<VaultRecord | null>;
  /** False when the vault is gone (deleted meanwhile): nothing written. */
  update(vault: VaultRecord, audit: AdminAuditEntry): Promise<boolean>;
  list(workspaceId: string, query: VaultListQuery): Promise<Page<VaultRecord>>;
  /**
   * Deletes the vault and every credential in it: heads become tombstones (so a later admission can
   * say "deleted" rather than "unknown") and every sealed revision is erased.
   */
  delete(workspaceId: string, vaultId: string, now: number, audit: AdminAuditEntry): Promise<boolean>;
}

export type CreateCredentialResult = { created: true } | { created: false; conflictWith: string | null };

export interface CredentialStore {
  /** Fails (without writing) when a live credential of the vault already has the same usage key. */
  create(
    head: CredentialHead,
    first: CredentialRevision,
    audit: AdminAuditEntry,
  ): Promise<CreateCredentialResult>;
  /** The head and its latest revision; null when missing, deleted, or not in that vault/workspace. */
  get(workspaceId: string, vaultId: string, credentialId: string): Promise<CredentialView | null>;
  getRevision(
    workspaceId: string,
    credentialId: string,
    revision: number,
  ): Promise<CredentialRevision | null>;
  /** Appends `revision` and moves the head to it, only if the head is still at `expectedLatest`. */
  appendRevision(
    head: CredentialHead,
    revision: CredentialRevision,
    expectedLatest: number,
    audit: AdminAuditEntry,
  ): Promise<boolean>;
  /** Name, metadata and lifecycle changes that need no new revision. False when it is gone. */
  updateHead(head: CredentialHead, audit: AdminAuditEntry): Promise<boolean>;
  list(workspaceId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialView>>;
  /** The credential's stored revisions, newest first; empty when it is deleted or in another workspace. */
  listRevisions(
    workspaceId: string,
    credentialId: string,
    query: ListQuery,
  ): Promise<Page<CredentialRevision>>;
  /** Tombstones the head and erases every sealed revision of it. */
  delete(
    workspaceId: string,
    vaultId: string,
    credentialId: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<boolean>;
}

/** One stored revision's seal, with the identity columns of its own row (what the seal binds to). */
export interface SealedRevisionRow {
  workspaceId: string;
  credentialId: string;
  revision: number;
  sealed: SealedSecret;
}

/** Where a listing of sealed revisions resumes: after this (credential id, revision). */
export interface SealedRevisionCursor {
  credentialId: string;
  revision: number;
}

/**
 * The re-seal of a master-key rotation (`control/masterKeyReseal.ts`, `awaken secrets reseal`):
 * the one place a stored revision's seal is rewritten. The revision's identity, auth and field
 * names never change; only the seal columns do, each revision in its own transaction.
 */
export interface SealedRevisionStore {
  /** How many stored revisions each master key id seals. */
  countByMasterKey(): Promise<Map<string, number>>;
  /** Up to `limit` revisions not sealed under `keyId`, in (credential id, revision) order after `after`. */
  listSealedNotUnder(
    keyId: string,
    after: SealedRevisionCursor | null,
    limit: number,
  ): Promise<SealedRevisionRow[]>;
  /**
   * Replaces one revision's seal with `next`, only while the row still holds exactly `current.sealed`
   * (one transaction). False when the row changed (re-sealed by another run) or is gone (deleted).
   */
  replaceSealed(current: SealedRevisionRow, next: SealedSecret, audit: AdminAuditEntry): Promise<boolean>;
}

/** One open (or refusal) of a pinned credential by a last-mile holder. Never material. */
export interface CredentialOpenRecord {
  id: string;
  workspaceId: string;
  sessionId: string;
  runId: string;
  /** The worker identity holding the run's claim, and the claim's epoch. */
  owner: string;
  epoch: number;
  vaultId: string;
  credentialId: string;
  revision: number;
  usageKey: string;
  holder: string;
  outcome: "opened" | "refreshed" | "refused";
  reason: string | null;
  /** For `refreshed`: the revision the refresh committed. */
  refreshedTo: number | null;
  createdAt: number;
}

/** Which opens a custody audit read returns: the workspace's, narrowed by credential and/or session. */
export interface CredentialOpenQuery extends ListQuery {
  credentialId?: string | undefined;
  sessionId?: string | undefined;
}

/** The open audit: append-only; read by operators (and tests) per session, or paged newest first. */
export interface CredentialOpenAudit {
  record(entry: CredentialOpenRecord): Promise<void>;
  listForSession(workspaceId: string, sessionId: string): Promise<CredentialOpenRecord[]>;
  /** The workspace's opens and refusals, newest first. */
  list(workspaceId: string, query: CredentialOpenQuery): Promise<Page<CredentialOpenRecord>>;
  /** The revision a holder's refresh of exactly this revision committed, if one did. */
  refreshedFrom(workspaceId: string, credentialId: string, revision: number): Promise<number | null>;
}
