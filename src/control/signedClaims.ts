import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";

/**
 * A token that is its own claims: `<prefix><base64url JSON>.<base64url HMAC-SHA-256>`, signed
 * under a master-key-derived key and a domain string naming the token kind, so one kind's
 * signature never verifies as another's. Access tokens and user profile action URLs share it.
 */
export interface SignedClaimsFormat {
  prefix: string;
  /** Hashed before the payload: a token of another kind signed under the same key fails. */
  domain: string;
  /** Longer than any token of this kind: a longer string is refused before any work. */
  maxChars: number;
}

/** Each signing key as a KeyObject, made once: an HMAC under a raw Buffer builds one per call. */
const keyObjects = new WeakMap<Buffer, KeyObject>();

function sign(format: SignedClaimsFormat, key: Buffer, payload: string): Buffer {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac("sha256", keyObject).update(format.domain).update(payload).digest();
}

export function encodeSignedClaims(format: SignedClaimsFormat, key: Buffer, claims: object): string {
  const payload = Buffer.from(JSON.stringify(claims), "utf8").toString("base64url");
  return `${format.prefix}${payload}.${sign(format, key, payload).toString("base64url")}`;
}

/** The parsed claims of a token signed under `key`, or null (their shape is the caller's check). */
export function decodeSignedClaims(format: SignedClaimsFormat, key: Buffer, token: string): unknown {
  if (!token.startsWith(format.prefix) || token.length > format.maxChars) return null;
  const [payload, signature, ...rest] = token.slice(format.prefix.length).split(".");
  if (payload === undefined || signature === undefined || rest.length > 0) return null;
  const expected = sign(format, key, payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}
