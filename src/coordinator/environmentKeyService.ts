import { randomBytes } from "node:crypto";
import { type Actor, auditEntry } from "../control/adminAudit.js";
import { BoundedCache } from "../kernel/boundedCache.js";
import { sha256Hex } from "../kernel/canonicalJson.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import type { EnvironmentKeyRecord, EnvironmentKeyStore, EnvironmentStore } from "./ports.js";

/** Every environment key starts with this, so a request's credential kind is known before a lookup. */
export const ENVIRONMENT_KEY_PREFIX = "sk-awaken-env-";

/**
 * An id with a prefix the kernel's `IdPrefix` list does not name (the list belongs to the kernel);
 * same time-sortable shape as `newId`.
 */
export function extensionId(prefix: "envkey" | "work", now: number): string {
  return `${prefix}_${newId("key", now).slice("key_".length)}`;
}

/**
 * Environment keys (an Awaken extension: no SDK endpoint mints them). A key authenticates the
 * worker of exactly one self_hosted environment on that environment's work routes. Keys are stored
 * as SHA-256 hashes and shown once. Lookups are cached per process like API keys; a revoke clears
 * this process's entry at once, other replicas within `cacheMs`.
 */
export class EnvironmentKeyService {
  /** Answers by key hash (a refusal too), each kept for `cacheMs`. */
  private readonly cache: BoundedCache<string, EnvironmentKeyRecord | null>;

  constructor(
    private readonly keys: EnvironmentKeyStore,
    private readonly environments: EnvironmentStore,
    private readonly clock: Clock,
    cacheMs = 30_000,
  ) {
    this.cache = new BoundedCache({ maxEntries: 10_000, ttlMs: cacheMs, clock });
  }

  static isEnvironmentKey(credential: string): boolean {
    return credential.startsWith(ENVIRONMENT_KEY_PREFIX);
  }

  async create(
    by: Actor,
    environmentId: string,
    name: string | null,
  ): Promise<{ record: EnvironmentKeyRecord; key: string }> {
    const workspaceId = by.workspaceId;
    const env = await this.environments.get(workspaceId, environmentId);
    if (!env) throw environmentNotFound(environmentId);
    if (env.config.type !== "self_hosted") {
      throw new AwakenError(
        "invalid_request",
        `environment ${environmentId} is a ${env.config.type} environment; only self_hosted environments have environment keys (their workers poll /v1/environments/{id}/work)`,
      );
    }
    if (env.archivedAt !== null) {
      throw new AwakenError(
        "environment_archived",
        `environment ${environmentId} is archived; it takes no new keys`,
        {
          details: { error_code: "environment_archived" },
        },
      );
    }
    const now = this.clock.now();
    const key = `${ENVIRONMENT_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
    const record: EnvironmentKeyRecord = {
      id: extensionId("envkey", now),
      workspaceId,
      environmentId,
      name,
      keyHash: sha256Hex(key),
      keyHint: `${ENVIRONMENT_KEY_PREFIX}…${key.slice(-4)}`,
      createdAt: now,
      revokedAt: null,
    };
    await this.keys.create(record, keyAudit(by, "create", null, record, now));
    return { record, key };
  }

  async list(
    workspaceId: string,
    environmentId: string,
    query: ListQuery,
  ): Promise<Page<EnvironmentKeyRecord>> {
    if (!(await this.environments.get(workspaceId, environmentId))) throw environmentNotFound(environmentId);
    return this.keys.list(workspaceId, environmentId, query);
  }

  async revoke(by: Actor, environmentId: string, keyId: string): Promise<EnvironmentKeyRecord> {
    const before = await this.keys.get(by.workspaceId, environmentId, keyId);
    if (!before) throw notFound("environment key", keyId);
    const now = this.clock.now();
    const audit = keyAudit(by, "revoke", before, { ...before, revokedAt: now }, now);
    const record = await this.keys.revoke(by.workspaceId, environmentId, keyId, now, audit);
    if (!record) throw notFound("environment key", keyId);
    this.cache.delete(record.keyHash);
    return record;
  }

  /** The live (not revoked) key this credential is, or null. */
  async authenticate(credential: string): Promise<EnvironmentKeyRecord | null> {
    const hash = sha256Hex(credential);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    const found = await this.keys.findByHash(hash);
    const record = found && found.revokedAt === null ? found : null;
    this.cache.set(hash, record, now);
    return record;
  }
}

/** An environment key's audit entry, digesting what a listing shows (never the key or its hash). */
function keyAudit(
  by: Actor,
  action: "create" | "revoke",
  before: EnvironmentKeyRecord | null,
  after: EnvironmentKeyRecord,
  at: number,
) {
  const view = (k: EnvironmentKeyRecord | null) =>
    k && {
      id: k.id,
      environmentId: k.environmentId,
      name: k.name,
      keyHint: k.keyHint,
      createdAt: k.createdAt,
      revokedAt: k.revokedAt,
    };
  return auditEntry(by, {
    action,
    resourceType: "environment_key",
    resourceId: after.id,
    before: view(before),
    after: view(after),
    at,
  });
}

export function environmentNotFound(id: string): AwakenError {
  return new AwakenError(
    "environment_not_found",
    `environment ${JSON.stringify(id)} was not found in this workspace`,
    {
      details: { error_code: "environment_not_found" },
    },
  );
}
