import type { ListQuery, Page } from "../kernel/pagination.js";
import type { AdminAuditEntry, AdminAuditReader } from "./adminAudit.js";
import type { AgentDefinition } from "./agentDefinition.js";
import type { ApiKeyRole } from "./apiKeyRoles.js";
import type { ConsentStore } from "./consent.js";
import type { UserProfileStore } from "./userProfiles.js";
import type { CredentialOpenAudit, CredentialStore, VaultStore } from "./vaultPorts.js";

/** The mutable head of an agent: which version is latest, and whether it is archived. */
export interface AgentHead {
  id: string;
  workspaceId: string;
  latestVersion: number;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

/** One immutable version of an agent's configuration. Never updated, never deleted. */
export interface StoredPublication {
  workspaceId: string;
  agentId: string;
  version: number;
  fingerprint: string;
  definition: AgentDefinition;
  createdAt: number;
}

export interface AgentListQuery extends ListQuery {
  includeArchived: boolean;
  createdAt?: { gte?: number; lte?: number };
}

/**
 * Agent authoring's store. Each write takes the admin audit entry of the change and commits it in
 * the change's own transaction, only when the change took effect.
 */
export interface PublicationStore {
  createAgent(head: AgentHead, first: StoredPublication, audit: AdminAuditEntry): Promise<void>;
  /** Appends the next version only if `expectedLatest` is still the latest (optimistic concurrency). */
  appendVersion(
    publication: StoredPublication,
    expectedLatest: number,
    audit: AdminAuditEntry,
  ): Promise<boolean>;
  getHead(workspaceId: string, agentId: string): Promise<AgentHead | null>;
  getPublication(workspaceId: string, agentId: string, version: number): Promise<StoredPublication | null>;
  /**
   * An agent's head with one of its publications (the latest when `version` is absent) and when
   * that publication was registered, in one read; null when there is no such agent.
   */
  getAgent(workspaceId: string, agentId: string, version?: number): Promise<StoredAgent | null>;
  listAgents(
    workspaceId: string,
    query: AgentListQuery,
  ): Promise<Page<{ head: AgentHead; latest: StoredPublication }>>;
  listVersions(workspaceId: string, agentId: string, query: ListQuery): Promise<Page<StoredPublication>>;
  /** False when the agent was already archived (nothing written, no audit). */
  archive(workspaceId: string, agentId: string, now: number, audit: AdminAuditEntry): Promise<boolean>;
  /**
   * Records that the Coordinator's catalog holds the publication (clearing a refusal); a row
   * already registered keeps its first time and is not written (session starts call this often).
   */
  markRegistered(workspaceId: string, agentId: string, version: number, at: number): Promise<void>;
  /** Records that the Coordinator refused the publication for good; it is never retried. */
  markRegistrationRefused(
    workspaceId: string,
    agentId: string,
    version: number,
    message: string,
  ): Promise<void>;
  /**
   * Publications neither registered nor refused, oldest first, across workspaces; `after` (the last
   * one of the previous page) pages past ones that stay unregistered.
   */
  listUnregistered(limit: number, after?: StoredPublication): Promise<StoredPublication[]>;
  /** Clears every non-refused registration (a Coordinator's catalog is rebuilt); returns how many. */
  markAllUnregistered(): Promise<number>;
}

/** An agent read with one publication: null when the agent lacks that version. */
export interface StoredAgent {
  head: AgentHead;
  publication: StoredPublication | null;
  /** When the publication was registered with the Coordinator; null while it is not. */
  registeredAt: number | null;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  keyHash: string;
  /** How `keyHash` was made (`control/apiKeyHashing.ts`). */
  hashScheme: string;
  label: string;
  role: ApiKeyRole;
  /** The agents the key may use (only runtime keys carry a list); null: every agent of its workspace. */
  agentIds: readonly string[] | null;
  createdAt: number;
  revokedAt: number | null;
}

/** A workspace row to make with a key when it does not exist yet, with its audit entry. */
export interface NewWorkspace {
  id: string;
  name: string;
  createdAt: number;
  audit: AdminAuditEntry;
}

export interface IamStore {
  /** Makes the workspace unless it exists; the audit entry is written only when it was made. */
  ensureWorkspace(workspace: NewWorkspace): Promise<void>;
  /**
   * Adds the key (and its workspace, when missing) in one transaction with their audit entries;
   * a key whose hash is already stored writes nothing. False then.
   */
  addApiKey(record: ApiKeyRecord, audit: AdminAuditEntry, workspace?: NewWorkspace): Promise<boolean>;
  /** The key stored under any of these hashes (each a scheme's hash of one presented key). */
  findApiKeyByHashes(keyHashes: readonly string[]): Promise<ApiKeyRecord | null>;
  /**
   * Rewrites a key's stored hash to another scheme, only while it still holds `from` (a concurrent
   * rewrite by another replica wins, harmlessly); not an admin change, so not audited.
   */
  rehashApiKey(id: string, from: string, to: { keyHash: string; hashScheme: string }): Promise<boolean>;
  /** Moves the recorded bootstrap key hash from `from` to `to` (its scheme's rewrite). */
  replaceBootstrapKey(from: string, to: string, now: number): Promise<boolean>;
  findApiKey(workspaceId: string, id: string): Promise<ApiKeyRecord | null>;
  /** A workspace's keys by id (oldest first), `limit` at a time after `afterId`. */
  listApiKeys(workspaceId: string, limit: number, afterId: string | null): Promise<ApiKeyRecord[]>;
  /**
   * Marks the key revoked (once: a second revoke keeps the first time, and writes no audit entry);
   * null when there is no such key.
   */
  revokeApiKey(
    workspaceId: string,
    id: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<ApiKeyRecord | null>;
  /**
   * Records `keyHash` as the installation's bootstrap key unless one is recorded (first writer
   * wins across replicas); returns the recorded hash.
   */
  claimBootstrapKey(keyHash: string, now: number): Promise<string>;
}

/**
 * Key revocations told to every process on the database (PostgreSQL NOTIFY), so each drops its
 * cached answers for the key at once instead of when they expire. Only latency depends on it: a
 * notice that never arrives leaves the cache's expiry as the bound.
 */
export interface RevocationNotices {
  /** Tells every process, this one included, that `keyId` was revoked; resolves once sent, never rejects. */
  keyRevoked(keyId: string): Promise<void>;
  /**
   * Hears each revoked key id; null when notices may have been missed (the channel reconnected),
   * so every cached answer is suspect.
   */
  onKeyRevoked(listener: (keyId: string | null) => void): () => void;
}

/**
 * Resolves a custom skill reference to the exact version a publication pins, so a session never
 * resolves "latest" at run time. Skills live with the Resources context: the composition root
 * implements this with its skill service (in process, or over the link from a split Control).
 */
export interface SkillVersionResolver {
  /**
   * The version id `version` names (null or `latest`: the skill's newest now). Throws an
   * `invalid_request` naming the skill when it is unknown in the workspace or has no such version.
   */
  resolve(workspaceId: string, skillId: string, version: string | null): Promise<string>;
}

/** Control's role-narrowed store bundle. */
export interface ControlStores {
  publications: PublicationStore;
  iam: IamStore;
  /** Vault ingress: credential metadata in clear, secret fields only as sealed records. */
  vaults: VaultStore;
  credentials: CredentialStore;
  /** Every open of a pinned credential by a holder (who, which pin, which holder, when). */
  credentialOpens: CredentialOpenAudit;
  /** The admin audit's read side (each store above writes its own entries). */
  adminAudit: AdminAuditReader;
  /** Data-subject consent per purpose. */
  consents: ConsentStore;
  /** The end customers a workspace serves (user profiles), tombstoned on delete. */
  userProfiles: UserProfileStore;
}
