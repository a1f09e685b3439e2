import { BoundedCache } from "../kernel/boundedCache.js";
import type { Clock } from "../kernel/clock.js";
import { AUTH_CACHE_ENTRIES, authCacheKey, type IamService, type Principal } from "./iamService.js";

/** The IAM calls Control serves a split Coordinator over its link (the edge's `IamPort`). */
type LinkedIam = Pick<
  IamService,
  "authenticate" | "createApiKey" | "listApiKeys" | "revokeApiKey" | "mintAccessToken"
>;

/**
 * A split Coordinator's authentication cache in front of Control's link. Every request
 * authenticates, and a link call costs more than the rest of a small request, so an API key's
 * answer (its principal, or a refusal) is kept for `cacheMs`, keyed by a digest of the key. An
 * access token's answer is never kept: Control checks its expiry on every request. A revocation
 * forwarded through this coordinator drops the key's entries at once; on other coordinators it takes
 * effect within `cacheMs` (replicas of the all-in-one server hear a revocation notice instead).
 */
export function cachedIam(iam: LinkedIam, clock: Clock, cacheMs: number): LinkedIam {
  const cache = new BoundedCache<string, Principal | null>({
    maxEntries: AUTH_CACHE_ENTRIES,
    ttlMs: cacheMs,
    clock,
  });
  return {
    async authenticate(apiKey) {
      const key = authCacheKey(apiKey);
      const now = clock.now();
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const principal = await iam.authenticate(apiKey);
      if (principal?.accessTokenId === undefined) {
        cache.set(key, principal, now);
      }
      return principal;
    },
    async revokeApiKey(by, id) {
      const record = await iam.revokeApiKey(by, id);
      cache.deleteWhere((principal) => principal?.apiKeyId === record.id);
      return record;
    },
    createApiKey: (by, request) => iam.createApiKey(by, request),
    listApiKeys: (by, page) => iam.listApiKeys(by, page),
    mintAccessToken: (by, request) => iam.mintAccessToken(by, request),
  };
}
