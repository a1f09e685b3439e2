import { createHmac, createSecretKey, hash, type KeyObject } from "node:crypto";

/**
 * How an API key is stored: HMAC-SHA-256 under a key the server derives from its master key (the
 * scheme names the master key's id), so the database alone cannot check a guessed key offline.
 * `sha256` is the scheme of keys stored before; such a row is rewritten to the current scheme the
 * first time its key authenticates (a migration cannot do it: it has neither the key nor the
 * master key).
 */
export type ApiKeyHashScheme = string;
export const LEGACY_SHA256_SCHEME = "sha256";
const HMAC_SCHEME_PREFIX = "hmac-sha256:";
const HMAC_DOMAIN = "awaken api key v1\n";

/** One HMAC key: derived from a master key (its id names the scheme). */
export interface ApiKeyHashKey {
  masterKeyId: string;
  key: Buffer;
}

export interface ApiKeyDigest {
  scheme: ApiKeyHashScheme;
  hash: string;
}

/** The current scheme first, then every scheme a stored row may still use. */
export interface ApiKeyHashing {
  current(apiKey: string): ApiKeyDigest;
  candidates(apiKey: string): ApiKeyDigest[];
}

export function legacySha256(apiKey: string): ApiKeyDigest {
  return { scheme: LEGACY_SHA256_SCHEME, hash: hash("sha256", apiKey) };
}

/** A derived key made a KeyObject once: an HMAC under a raw Buffer builds one per call (~7× slower). */
interface HmacKey {
  scheme: ApiKeyHashScheme;
  key: KeyObject;
}

function hmacKey(k: ApiKeyHashKey): HmacKey {
  return { scheme: `${HMAC_SCHEME_PREFIX}${k.masterKeyId}`, key: createSecretKey(k.key) };
}

function hmacDigest(k: HmacKey, apiKey: string): ApiKeyDigest {
  return {
    scheme: k.scheme,
    hash: createHmac("sha256", k.key).update(HMAC_DOMAIN).update(apiKey).digest("hex"),
  };
}

/**
 * Hashing under `current` (the master key's derived key) and, for rows not yet rewritten, under
 * `retired` master keys' derived keys and plain SHA-256. Without a key (a composition with no
 * master key), keys are stored as SHA-256, as before.
 */
export function apiKeyHashing(
  currentKey: ApiKeyHashKey | null,
  retiredKeys: readonly ApiKeyHashKey[] = [],
): ApiKeyHashing {
  const current = currentKey ? hmacKey(currentKey) : null;
  const retired = retiredKeys.map(hmacKey);
  return {
    current: (apiKey) => (current ? hmacDigest(current, apiKey) : legacySha256(apiKey)),
    candidates: (apiKey) => [
      ...(current ? [hmacDigest(current, apiKey)] : []),
      ...retired.map((k) => hmacDigest(k, apiKey)),
      legacySha256(apiKey),
    ],
  };
}
