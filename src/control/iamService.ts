import { hash as digest, randomBytes } from "node:crypto";
import { BoundedCache } from "../kernel/boundedCache.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { Page } from "../kernel/pagination.js";
import {
  type AccessTokenClaims,
  decodeAccessToken,
  encodeAccessToken,
  MAX_ACCESS_TOKEN_TTL_S,
  newAccessTokenId,
} from "./accessTokens.js";
import { type Actor, type AuditAction, auditEntry } from "./adminAudit.js";
import { type ApiKeyHashing, apiKeyHashing } from "./apiKeyHashing.js";
import type { ApiKeyRole } from "./apiKeyRoles.js";
import {
  type AccessOperation,
  allowListProblem,
  type CallerScope,
  isUnscoped,
  narrowScope,
  sessionNamespaceProblem,
} from "./callerScope.js";
import type { ApiKeyRecord, IamStore, NewWorkspace, RevocationNotices } from "./ports.js";

export const DEFAULT_WORKSPACE_ID = "wrkspc_default";
/**
 * How long a process keeps an API key's authentication answer. Replicas told of revocations
 * (`RevocationNotices`) forget a revoked key at once; this bounds a notice that never arrived.
 */
export const DEFAULT_AUTH_CACHE_MS = 30_000;
/** Cached answers per process; past it the least recently used go (random keys cannot grow it). */
export const AUTH_CACHE_ENTRIES = 10_000;

export interface Principal {
  workspaceId: string;
  apiKeyId: string;
  role: ApiKeyRole;
  /** What the key (or the access token) reaches inside its workspace and role. */
  scope: CallerScope;
  /** Set when the request carries an application access token (`apiKeyId` is its minter). */
  accessTokenId?: string;
  /** The access token's expiry (epoch ms), so a stream it opened ends then. */
  expiresAt?: number;
}

export interface MintAccessTokenRequest {
  operations: readonly AccessOperation[];
  /** Null: the minter's agents. */
  agentIds: readonly string[] | null;
  /** The one session the token reaches (checked against the minter's scope by the caller). */
  sessionId: string | null;
  /** The prefix of the client session names the token is confined to (not with `sessionId`). */
  sessionNamespace?: string | null;
  ttlSeconds: number;
}

export function scopeOfKey(record: ApiKeyRecord): CallerScope {
  return { agentIds: record.agentIds, sessionId: null, sessionNamespace: null, operations: null };
}

/** Workspace ids a client may name: the prefix, then a short slug. */
const WORKSPACE_ID = /^wrkspc_[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * API keys are stored as HMAC-SHA-256 hashes only (`apiKeyHashing.ts`). Lookups are cached per process because every request
 * authenticates; a revocation drops the key's entries here, and on every process `revocations`
 * reaches. Elsewhere, or when a notice is lost (a failed NOTIFY), the entry's expiry (`cacheMs`) bounds it.
 */
export class IamService {
  /** Answers by key digest (a refusal too), each kept for `cacheMs`. */
  private readonly cache: BoundedCache<string, Principal | null>;
  /** Minting keys of access tokens, by id, so a token's check reads no row most of the time. */
  private readonly minters: BoundedCache<string, ApiKeyRecord | null>;
  /** Counts revocations heard: a row read while one was heard may predate it, so it is not kept. */
  private revocationsHeard = 0;

  constructor(
    private readonly store: IamStore,
    private readonly clock: Clock,
    cacheMs = DEFAULT_AUTH_CACHE_MS,
    /** The HMAC key access tokens are signed with (derived from the master key); null: no tokens. */
    private readonly accessTokenKey: Buffer | null = null,
    /** How keys are stored (HMAC under a master-key-derived key) and which older schemes still match. */
    private readonly hashing: ApiKeyHashing = apiKeyHashing(null),
    /** Revocations shared with the other processes on the database (PostgreSQL); null: this process only. */
    private readonly revocations: RevocationNotices | null = null,
  ) {
    const bound = { maxEntries: AUTH_CACHE_ENTRIES, ttlMs: cacheMs, clock };
    this.cache = new BoundedCache(bound);
    this.minters = new BoundedCache(bound);
    revocations?.onKeyRevoked((keyId) => this.forget(keyId));
  }

  static generateKey(): string {
    return `sk-awaken-${randomBytes(24).toString("base64url")}`;
  }

  /**
   * A key the operator chose (AWAKEN_API_KEY, or the data dir's stored key): it always works, and
   * becomes the installation's bootstrap key when none is recorded yet.
   */
  async bootstrap(apiKey: string): Promise<void> {
    const now = this.clock.now();
    await this.store.ensureWorkspace(defaultWorkspace(now));
    const current = this.hashing.current(apiKey).hash;
    const recorded = await this.store.claimBootstrapKey(current, now);
    // Recorded under an older scheme: the fact moves to the current one like the key's row does.
    if (recorded !== current && this.hashing.candidates(apiKey).some((c) => c.hash === recorded)) {
      await this.store.replaceBootstrapKey(recorded, current, now);
    }
    await this.addDefaultKey(apiKey, now);
  }

  /**
   * A key generated at a first start: registered only when the installation has no bootstrap key
   * yet. False when one exists (another replica's first start minted it): replicas never mint a
   * second key.
   */
  async bootstrapGenerated(apiKey: string): Promise<boolean> {
    const now = this.clock.now();
    const hash = this.hashing.current(apiKey).hash;
    await this.store.ensureWorkspace(defaultWorkspace(now));
    if ((await this.store.claimBootstrapKey(hash, now)) !== hash) return false;
    await this.addDefaultKey(apiKey, now);
    return true;
  }

  private async addDefaultKey(apiKey: string, now: number): Promise<void> {
    // Stored already (under any scheme; rewritten to the current one by the lookup), or revoked.
    if (await this.findStored(apiKey)) return;
    const digest = this.hashing.current(apiKey);
    const record: ApiKeyRecord = {
      id: newId("key", now),
      workspaceId: DEFAULT_WORKSPACE_ID,
      keyHash: digest.hash,
      hashScheme: digest.scheme,
      label: "default",
      role: "admin",
      agentIds: null,
      createdAt: now,
      revokedAt: null,
    };
    // Written only when the key is new: a restart with the same key records nothing.
    await this.store.addApiKey(record, apiKeyAudit(BOOTSTRAP, "create", null, record, now));
  }

  async authenticate(apiKey: string): Promise<Principal | null> {
    const claims = this.accessTokenKey ? decodeAccessToken(this.accessTokenKey, apiKey) : null;
    // A string that is no token this server signed may still be an operator-chosen API key.
    if (claims) return this.tokenPrincipal(claims);
    // Every request authenticates: the cache is keyed by a plain digest (a fraction of the HMAC's
    // cost), never by the key itself; only a miss computes the stored hashes.
    const hash = authCacheKey(apiKey);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    const heard = this.revocationsHeard;
    const record = await this.findStored(apiKey);
    const principal =
      record && record.revokedAt === null
        ? {
            workspaceId: record.workspaceId,
            apiKeyId: record.id,
            role: record.role,
            scope: scopeOfKey(record),
          }
        : null;
    if (heard !== this.revocationsHeard) return principal;
    this.cache.set(hash, principal, now);
    return principal;
  }

  /**
   * The stored key `apiKey` is, under whichever scheme its row uses (the hash must be that scheme's
   * own); a row under an older scheme is rewritten to the current one, so it is checked once.
   */
  private async findStored(apiKey: string): Promise<ApiKeyRecord | null> {
    const candidates = this.hashing.candidates(apiKey);
    const record = await this.store.findApiKeyByHashes(candidates.map((c) => c.hash));
    if (!record) return null;
    const match = candidates.find((c) => c.scheme === record.hashScheme && c.hash === record.keyHash);
    if (!match) return null;
    const current = this.hashing.current(apiKey);
    if (match.scheme === current.scheme) return record;
    await this.store.rehashApiKey(record.id, record.keyHash, {
      keyHash: current.hash,
      hashScheme: current.scheme,
    });
    return { ...record, keyHash: current.hash, hashScheme: current.scheme };
  }

  /**
   * A new key, shown only in this answer (only its hash is kept). An admin of the default workspace
   * (the installation's) may make one in another workspace, which is created with it; every other
   * admin makes keys in its own workspace only.
   */
  async createApiKey(
    by: Principal,
    request: {
      role: ApiKeyRole;
      label: string | null;
      workspaceId: string | null;
      /** The agents the key may use; null: every agent. Only a runtime key carries a list. */
      agentIds: readonly string[] | null;
    },
  ): Promise<{ record: ApiKeyRecord; key: string }> {
    const agentIds = request.agentIds === null ? null : [...new Set(request.agentIds)];
    if (agentIds !== null) {
      if (request.role !== "runtime") {
        throw new AwakenError(
          "invalid_request",
          "agent_ids: only a runtime key carries an agent allow-list (a builder or admin key authors every agent of its workspace).",
        );
      }
      const problem = allowListProblem("agent_ids", agentIds);
      if (problem) throw new AwakenError("invalid_request", problem);
    }
    if (!isUnscoped(by.scope)) {
      throw new AwakenError("permission_denied", "Only an unrestricted admin key makes keys.");
    }
    const workspaceId = request.workspaceId ?? by.workspaceId;
    if (workspaceId !== by.workspaceId) {
      if (by.workspaceId !== DEFAULT_WORKSPACE_ID) {
        throw new AwakenError(
          "permission_denied",
          `This key's workspace is ${by.workspaceId}; only an admin key of ${DEFAULT_WORKSPACE_ID} makes keys in other workspaces.`,
        );
      }
      if (!WORKSPACE_ID.test(workspaceId)) {
        throw new AwakenError(
          "invalid_request",
          "workspace_id: expected wrkspc_ followed by 1–63 lower-case letters, digits, _ or -.",
        );
      }
    }
    const now = this.clock.now();
    const key = IamService.generateKey();
    const digest = this.hashing.current(key);
    const record: ApiKeyRecord = {
      id: newId("key", now),
      workspaceId,
      keyHash: digest.hash,
      hashScheme: digest.scheme,
      label: request.label ?? "",
      role: request.role,
      agentIds,
      createdAt: now,
      revokedAt: null,
    };
    // The entries land in the key's workspace, whose admins read them; the actor names the maker.
    const actor: Actor = { workspaceId, actor: by.apiKeyId };
    const workspace: NewWorkspace = {
      id: workspaceId,
      name: workspaceId,
      createdAt: now,
      audit: auditEntry(actor, {
        action: "create",
        resourceType: "workspace",
        resourceId: workspaceId,
        before: null,
        after: { id: workspaceId, name: workspaceId },
        at: now,
      }),
    };
    await this.store.addApiKey(record, apiKeyAudit(actor, "create", null, record, now), workspace);
    return { record, key };
  }

  async listApiKeys(
    workspaceId: string,
    page: { limit: number; cursor: string | null },
  ): Promise<Page<ApiKeyRecord>> {
    const rows = await this.store.listApiKeys(workspaceId, page.limit + 1, page.cursor);
    const data = rows.slice(0, page.limit);
    return { data, nextCursor: rows.length > page.limit ? (data.at(-1)?.id ?? null) : null };
  }

  /**
   * A token for a browser or mobile client, never wider than `by`: runtime at most, its workspace,
   * its agents (a named agent outside them is not found), and it ends when `by`'s key is revoked.
   * An access token mints no tokens.
   */
  async mintAccessToken(
    by: Principal,
    request: MintAccessTokenRequest,
  ): Promise<{ token: string; claims: AccessTokenClaims }> {
    if (!this.accessTokenKey) {
      throw new AwakenError("invalid_request", "This server issues no access tokens (it has no master key).");
    }
    if (by.accessTokenId !== undefined) {
      throw new AwakenError(
        "permission_denied",
        "An access token cannot mint access tokens; mint them with the application's API key.",
      );
    }
    const operations = [...new Set(request.operations)];
    if (operations.length === 0)
      throw new AwakenError("invalid_request", "operations: name at least one of read, send, create.");
    if (request.sessionId !== null && operations.includes("create")) {
      throw new AwakenError(
        "invalid_request",
        "operations: a token confined to one session (session_id) cannot create sessions; leave out create.",
      );
    }
    const sessionNamespace = request.sessionNamespace ?? null;
    if (sessionNamespace !== null) {
      if (request.sessionId !== null) {
        throw new AwakenError(
          "invalid_request",
          "session_namespace: a token is confined to one session (session_id) or to a namespace of session names (session_namespace), not both; leave one out.",
        );
      }
      const problem = sessionNamespaceProblem("session_namespace", sessionNamespace);
      if (problem) throw new AwakenError("invalid_request", problem);
    }
    if (
      !Number.isInteger(request.ttlSeconds) ||
      request.ttlSeconds < 1 ||
      request.ttlSeconds > MAX_ACCESS_TOKEN_TTL_S
    ) {
      throw new AwakenError(
        "invalid_request",
        `ttl_seconds: a whole number from 1 to ${MAX_ACCESS_TOKEN_TTL_S}.`,
      );
    }
    const agentIds = request.agentIds === null ? null : [...new Set(request.agentIds)];
    if (agentIds !== null) {
      const problem = allowListProblem("agent_ids", agentIds);
      if (problem) throw new AwakenError("invalid_request", problem);
      const outside = agentIds.find((id) => by.scope.agentIds !== null && !by.scope.agentIds.includes(id));
      if (outside !== undefined) throw notFound("agent", outside);
    }
    const now = this.clock.now();
    const claims: AccessTokenClaims = {
      id: newAccessTokenId(),
      workspaceId: by.workspaceId,
      keyId: by.apiKeyId,
      agentIds: agentIds ?? by.scope.agentIds,
      sessionId: request.sessionId,
      sessionNamespace,
      operations,
      issuedAt: now,
      expiresAt: now + request.ttlSeconds * 1000,
    };
    return { token: encodeAccessToken(this.accessTokenKey, claims), claims };
  }

  private async tokenPrincipal(claims: AccessTokenClaims): Promise<Principal | null> {
    const now = this.clock.now();
    if (claims.expiresAt <= now) return null;
    const minter = await this.minter(claims.workspaceId, claims.keyId, now);
    if (!minter || minter.revokedAt !== null) return null;
    return {
      workspaceId: minter.workspaceId,
      apiKeyId: minter.id,
      // Every role includes runtime: a token runs sessions, whatever minted it.
      role: "runtime",
      scope: narrowScope(scopeOfKey(minter), claims),
      accessTokenId: claims.id,
      expiresAt: claims.expiresAt,
    };
  }

  private async minter(workspaceId: string, keyId: string, now: number): Promise<ApiKeyRecord | null> {
    const cached = this.minters.get(keyId);
    if (cached !== undefined) return cached;
    const heard = this.revocationsHeard;
    const record = await this.store.findApiKey(workspaceId, keyId);
    if (heard !== this.revocationsHeard) return record;
    this.minters.set(keyId, record, now);
    return record;
  }

  /**
   * Revokes a key of the workspace; this process refuses it at once, and so do the processes
   * `revocations` reaches once it answers (others within `cacheMs`).
   */
  async revokeApiKey(by: Actor, id: string): Promise<ApiKeyRecord> {
    const { workspaceId } = by;
    const current = await this.store.findApiKey(workspaceId, id);
    if (!current) throw notFound("API key", id);
    const now = this.clock.now();
    const audit = apiKeyAudit(by, "revoke", current, { ...current, revokedAt: now }, now);
    const record = await this.store.revokeApiKey(workspaceId, id, now, audit);
    if (!record) throw notFound("API key", id);
    // Committed: every process is told (this one at once) before this answers, so by the time the
    // client acts on the answer they refuse the key too (a lost notice leaves `cacheMs` as the bound).
    if (this.revocations) await this.revocations.keyRevoked(record.id);
    else this.forget(record.id);
    return record;
  }

  /** Drops the cached answers of a revoked key (null: of every key, notices may have been missed). */
  private forget(keyId: string | null): void {
    this.revocationsHeard++;
    if (keyId === null) {
      this.cache.clear();
      this.minters.clear();
      return;
    }
    // Cached by the presented key's current hash: drop every entry of this key, whatever its row held.
    this.cache.deleteWhere((principal) => principal?.apiKeyId === keyId);
    this.minters.delete(keyId);
  }
}

const BOOTSTRAP: Actor = { workspaceId: DEFAULT_WORKSPACE_ID, actor: "bootstrap" };

function defaultWorkspace(now: number): NewWorkspace {
  const view = { id: DEFAULT_WORKSPACE_ID, name: "Default workspace" };
  return {
    ...view,
    createdAt: now,
    audit: auditEntry(BOOTSTRAP, {
      action: "create",
      resourceType: "workspace",
      resourceId: DEFAULT_WORKSPACE_ID,
      before: null,
      after: view,
      at: now,
    }),
  };
}

/** A key's audit entry: its digest is of the listing's view, never of the key or its hash. */
function apiKeyAudit(
  by: Actor,
  action: AuditAction,
  before: ApiKeyRecord | null,
  after: ApiKeyRecord,
  at: number,
) {
  return auditEntry(by, {
    action,
    resourceType: "api_key",
    resourceId: after.id,
    before: before && apiKeyView(before),
    after: apiKeyView(after),
    at,
  });
}

function apiKeyView(record: ApiKeyRecord) {
  const { keyHash: _keyHash, hashScheme: _hashScheme, ...view } = record;
  return view;
}

/** An authentication cache's key for an API key: in memory only, never stored. */
export function authCacheKey(apiKey: string): string {
  return digest("sha256", apiKey, "base64");
}
