import { randomBytes } from "node:crypto";
import { sha256Hex } from "../kernel/canonicalJson.js";
import type { Clock } from "../kernel/clock.js";
import { newId } from "../kernel/ids.js";
import type { IamStore } from "./ports.js";

export const DEFAULT_WORKSPACE_ID = "wrkspc_default";

export interface Principal {
  workspaceId: string;
  apiKeyId: string;
}

/**
 * API keys are stored as SHA-256 hashes only. Lookups are cached per process because every request
 * authenticates; a revoked key stops working once its cache entry expires (`cacheMs`).
 */
export class IamService {
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(
    private readonly store: IamStore,
    private readonly clock: Clock,
    private readonly cacheMs = 30_000,
  ) {}

  static generateKey(): string {
    return `sk-awaken-${randomBytes(24).toString("base64url")}`;
  }

  /**
   * A key the operator chose (AWAKEN_API_KEY, or the data dir's stored key): it always works, and
   * becomes the installation's bootstrap key when none is recorded yet.
   */
  async bootstrap(apiKey: string): Promise<void> {
    const now = this.clock.now();
    await this.store.ensureWorkspace(DEFAULT_WORKSPACE_ID, "Default workspace", now);
    await this.store.claimBootstrapKey(sha256Hex(apiKey), now);
    await this.addDefaultKey(apiKey, now);
  }

  /**
   * A key generated at a first start: registered only when the installation has no bootstrap key
   * yet. False when one exists (another replica's first start minted it): replicas never mint a
   * second key.
   */
  async bootstrapGenerated(apiKey: string): Promise<boolean> {
    const now = this.clock.now();
    const hash = sha256Hex(apiKey);
    await this.store.ensureWorkspace(DEFAULT_WORKSPACE_ID, "Default workspace", now);
    if ((await this.store.claimBootstrapKey(hash, now)) !== hash) return false;
    await this.addDefaultKey(apiKey, now);
    return true;
  }

  private async addDefaultKey(apiKey: string, now: number): Promise<void> {
    await this.store.addApiKey({
      id: newId("key", now),
      workspaceId: DEFAULT_WORKSPACE_ID,
      keyHash: sha256Hex(apiKey),
      label: "default",
      createdAt: now,
      revokedAt: null,
    });
  }

  async authenticate(apiKey: string): Promise<Principal | null> {
    const hash = sha256Hex(apiKey);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const record = await this.store.findApiKeyByHash(hash);
    const principal =
      record && record.revokedAt === null ? { workspaceId: record.workspaceId, apiKeyId: record.id } : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { principal, until: now + this.cacheMs });
    return principal;
  }
}
