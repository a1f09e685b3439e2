import type { ListQuery, Page } from "../kernel/pagination.js";
import type { AgentDefinition } from "./agentDefinition.js";
import type { ApiKeyRole } from "./apiKeyRoles.js";
import type { ConsentStore } from "./consent.js";
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

export interface PublicationStore {
  createAgent(head: AgentHead, first: StoredPublication): Promise<void>;
  /** Appends the next version only if `expectedLatest` is still the latest (optimistic concurrency). */
  appendVersion(publication: StoredPublication, expectedLatest: number): Promise<boolean>;
  getHead(workspaceId: string, agentId: string): Promise<AgentHead | null>;
  getPublication(workspaceId: string, agentId: string, version: number): Promise<StoredPublication | null>;
  listAgents(
    workspaceId: string,
    query: AgentListQuery,
  ): Promise<Page<{ head: AgentHead; latest: StoredPublication }>>;
  listVersions(workspaceId: string, agentId: string, query: ListQuery): Promise<Page<StoredPublication>>;
  archive(workspaceId: string, agentId: string, now: number): Promise<void>;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  keyHash: string;
  label: string;
  role: ApiKeyRole;
  /** The agents the key may use (only runtime keys carry a list); null: every agent of its workspace. */
  agentIds: readonly string[] | null;
  createdAt: number;
  revokedAt: number | null;
}

export interface IamStore {
  ensureWorkspace(id: string, name: string, now: number): Promise<void>;
  addApiKey(record: ApiKeyRecord): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  findApiKey(workspaceId: string, id: string): Promise<ApiKeyRecord | null>;
  /** A workspace's keys by id (oldest first), `limit` at a time after `afterId`. */
  listApiKeys(workspaceId: string, limit: number, afterId: string | null): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked (once: a second revoke keeps the first time); null when there is no such key. */
  revokeApiKey(workspaceId: string, id: string, now: number): Promise<ApiKeyRecord | null>;
  /**
   * Records `keyHash` as the installation's bootstrap key unless one is recorded (first writer
   * wins across replicas); returns the recorded hash.
   */
  claimBootstrapKey(keyHash: string, now: number): Promise<string>;
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
  /** Data-subject consent per purpose. */
  consents: ConsentStore;
}
