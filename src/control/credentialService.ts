import type { Clock } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import { SecretOpenError } from "../secrets/errors.js";
import type { CredentialSealer, RevisionIdentity } from "../secrets/ports.js";
import { type Actor, type AuditAction, auditEntry } from "./adminAudit.js";
import { type CredentialAuthCreate, type CredentialAuthUpdate, SECRET_FIELDS } from "./credentialAuth.js";
import { resolveCredentialCreate, resolveCredentialUpdate } from "./credentialResolution.js";
import type { CredentialValidation, CredentialValidator } from "./credentialValidation.js";
import type {
  CredentialHead,
  CredentialRevision,
  CredentialStore,
  CredentialView,
  VaultListQuery,
} from "./vaultPorts.js";
import type { VaultService } from "./vaultService.js";

export interface CreateCredentialCommand {
  auth: CredentialAuthCreate;
  displayName: string | null;
  metadata: Record<string, string>;
}

export interface UpdateCredentialCommand {
  auth?: CredentialAuthUpdate | undefined;
  /** Undefined leaves the name; null clears it. */
  displayName?: string | null | undefined;
  metadata?: Record<string, string | null> | null | undefined;
  /** Rotate only from this revision (the holder's refresh of a pinned revision); else version_mismatch. */
  expectedRevision?: number | undefined;
}

export type { CredentialValidation } from "./credentialValidation.js";

/**
 * Vault ingress for credentials. Secret fields go straight to the sealer, bound to the exact
 * revision they belong to; what is stored in clear and returned is the secret-free projection.
 * Rotation (an update that touches auth) appends revision n+1 and never rewrites revision n, so a
 * session pinned to n keeps exactly what it pinned.
 */
export class CredentialService {
  constructor(
    private readonly store: CredentialStore,
    private readonly vaults: VaultService,
    private readonly sealer: CredentialSealer,
    private readonly clock: Clock,
    /** The live probe; without it `validate` answers `unknown` and contacts nothing. */
    private readonly validator?: CredentialValidator,
  ) {}

  async create(by: Actor, vaultId: string, cmd: CreateCredentialCommand): Promise<CredentialView> {
    const { workspaceId } = by;
    await this.vaults.getWritable(workspaceId, vaultId);
    const now = this.clock.now();
    const resolved = resolveCredentialCreate(cmd.auth, now);
    const id = newId("vcrd", now);
    const identity: RevisionIdentity = { credentialId: id, revision: 1, workspaceId };
    const { sealed, fieldNames } = await this.sealer.seal(identity, resolved.secrets);
    const head: CredentialHead = {
      id,
      workspaceId,
      vaultId,
      displayName: cmd.displayName,
      metadata: cmd.metadata,
      authType: resolved.auth.type,
      usageKey: resolved.usageKey,
      latestRevision: 1,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    const revision = revisionRow(identity, resolved.auth, fieldNames, sealed, now);
    const result = await this.store.create(
      head,
      revision,
      credentialAudit(by, "create", null, { head, revision }, now),
    );
    if (!result.created) throw usageConflict(head, result.conflictWith);
    return { head, revision };
  }

  async retrieve(workspaceId: string, vaultId: string, credentialId: string): Promise<CredentialView> {
    await this.vaults.get(workspaceId, vaultId);
    const view = await this.store.get(workspaceId, vaultId, credentialId);
    if (!view) throw notFound("credential", credentialId);
    return view;
  }

  async update(
    by: Actor,
    vaultId: string,
    credentialId: string,
    cmd: UpdateCredentialCommand,
  ): Promise<CredentialView> {
    const { workspaceId } = by;
    await this.vaults.getWritable(workspaceId, vaultId);
    const current = await this.retrieve(workspaceId, vaultId, credentialId);
    if (current.head.archivedAt !== null) {
      throw new AwakenError(
        "credential_archived",
        `credential ${credentialId} is archived and cannot be updated; create a new one`,
      );
    }
    const now = this.clock.now();
    const head: CredentialHead = {
      ...current.head,
      displayName: cmd.displayName === undefined ? current.head.displayName : cmd.displayName,
      metadata: applyMetadataPatch(current.head.metadata, cmd.metadata),
      updatedAt: now,
    };
    if (cmd.expectedRevision !== undefined && current.revision.revision !== cmd.expectedRevision) {
      throw new AwakenError(
        "version_mismatch",
        `credential ${credentialId} is at revision ${current.revision.revision}, not ${cmd.expectedRevision}`,
      );
    }
    const resolved = cmd.auth ? resolveCredentialUpdate(current.revision.auth, cmd.auth, now) : null;
    if (!resolved?.changed) {
      const after = { head, revision: current.revision };
      if (!(await this.store.updateHead(head, credentialAudit(by, "update", current, after, now)))) {
        throw notFound("credential", credentialId);
      }
      return after;
    }
    const previous = current.revision;
    const identity: RevisionIdentity = { credentialId, revision: previous.revision + 1, workspaceId };
    const { sealed, fieldNames } = await this.reseal(previous, identity, resolved.patch);
    const next = { ...head, latestRevision: identity.revision };
    const revision = revisionRow(identity, resolved.auth, fieldNames, sealed, now);
    const audit = credentialAudit(by, "rotate", current, { head: next, revision }, now);
    if (!(await this.store.appendRevision(next, revision, previous.revision, audit))) {
      throw new AwakenError(
        "version_mismatch",
        `credential ${credentialId} was rotated concurrently; retrieve it and apply your change again`,
      );
    }
    return { head: next, revision };
  }

  async list(workspaceId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialView>> {
    await this.vaults.get(workspaceId, vaultId);
    return this.store.list(workspaceId, vaultId, query);
  }

  /** The credential's revisions, newest first: its secret-free auth and sealed field names per rotation. */
  async listRevisions(
    workspaceId: string,
    vaultId: string,
    credentialId: string,
    query: ListQuery,
  ): Promise<Page<CredentialRevision>> {
    await this.retrieve(workspaceId, vaultId, credentialId);
    return this.store.listRevisions(workspaceId, credentialId, query);
  }

  async archive(by: Actor, vaultId: string, credentialId: string): Promise<CredentialView> {
    const current = await this.retrieve(by.workspaceId, vaultId, credentialId);
    if (current.head.archivedAt !== null) return current;
    const now = this.clock.now();
    const after = { head: { ...current.head, archivedAt: now, updatedAt: now }, revision: current.revision };
    if (!(await this.store.updateHead(after.head, credentialAudit(by, "archive", current, after, now)))) {
      throw notFound("credential", credentialId);
    }
    return after;
  }

  async delete(by: Actor, vaultId: string, credentialId: string): Promise<void> {
    const current = await this.retrieve(by.workspaceId, vaultId, credentialId);
    const now = this.clock.now();
    const audit = credentialAudit(by, "delete", current, null, now);
    if (!(await this.store.delete(by.workspaceId, vaultId, credentialId, now, audit))) {
      throw notFound("credential", credentialId);
    }
  }

  /**
   * `mcp_oauth_validate`: a live probe of the credential's current revision against its MCP server
   * (`credentialValidation.ts`). Without a validator (a composition that wires none) the answer is
   * `unknown` with nothing probed: nothing was tried, and nothing is claimed.
   */
  async validate(workspaceId: string, vaultId: string, credentialId: string): Promise<CredentialValidation> {
    const { head, revision } = await this.retrieve(workspaceId, vaultId, credentialId);
    if (head.authType === "environment_variable") {
      throw new AwakenError(
        "invalid_request",
        `credential ${credentialId} is an environment_variable credential; only MCP credentials (mcp_oauth, static_bearer) can be validated`,
      );
    }
    if (this.validator) {
      // A refresh commits a new revision: only where an update could (vault and credential live).
      const vault = await this.vaults.get(workspaceId, vaultId);
      const refreshable = vault.archivedAt === null && head.archivedAt === null;
      return this.validator.validate({ head, revision }, { refreshable });
    }
    return {
      credentialId,
      vaultId,
      status: "unknown",
      hasRefreshToken: revision.secretFields.includes(SECRET_FIELDS.refreshToken),
      mcpProbe: null,
      refresh: null,
      validatedAt: this.clock.now(),
    };
  }

  private async reseal(
    previous: CredentialRevision,
    next: RevisionIdentity,
    patch: Record<string, string | null>,
  ) {
    const from: RevisionIdentity = {
      credentialId: previous.credentialId,
      revision: previous.revision,
      workspaceId: previous.workspaceId,
    };
    try {
      return await this.sealer.reseal(
        { identity: from, sealed: previous.sealed, fieldNames: previous.secretFields },
        next,
        patch,
      );
    } catch (error) {
      // The stored revision does not open (another master key, or tampering): refuse the rotation
      // rather than seal a revision that silently drops the fields it should have kept.
      if (error instanceof SecretOpenError) {
        throw new AwakenError(
          "credential_unopenable",
          `${error.message}; the update was not applied. Send every secret field of this credential to replace them all, or restore the master key that sealed it.`,
          { retryable: false, cause: error },
        );
      }
      throw error;
    }
  }
}

/** The secret-free view a credential's digest is taken over: the head, the auth in clear, field names. */
function credentialAuditView(view: CredentialView) {
  const { sealed: _sealed, ...revision } = view.revision;
  return { head: view.head, revision };
}

function credentialAudit(
  by: Actor,
  action: AuditAction,
  before: CredentialView | null,
  after: CredentialView | null,
  at: number,
) {
  const view = after ?? before;
  return auditEntry(by, {
    action,
    resourceType: "credential",
    resourceId: view?.head.id ?? "",
    revision: view?.revision.revision ?? null,
    before: before && credentialAuditView(before),
    after: after && credentialAuditView(after),
    at,
  });
}

function revisionRow(
  identity: RevisionIdentity,
  auth: CredentialRevision["auth"],
  secretFields: string[],
  sealed: CredentialRevision["sealed"],
  now: number,
): CredentialRevision {
  return { ...identity, auth, secretFields, sealed, createdAt: now };
}

function usageConflict(head: CredentialHead, existing: string | null): AwakenError {
  const what = head.usageKey.startsWith("env:")
    ? `environment variable ${head.usageKey.slice(4)}`
    : `MCP server ${head.usageKey.slice(4)}`;
  return new AwakenError(
    "credential_usage_conflict",
    `vault ${head.vaultId} already has a live credential${existing ? ` (${existing})` : ""} for ${what}; ` +
      "rotate that one with an update, or archive it first",
  );
}
