import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto";
import { type AccessOperation, isAccessOperation } from "./callerScope.js";

/**
 * Application access tokens: short-lived credentials a backend holding an API key mints for a
 * browser or mobile client. A token is its own claims, signed with HMAC-SHA-256 under a key the
 * server derives from the master key, so minting writes nothing and checking one reads only its
 * minting key (for revocation). The claims are visible to whoever holds the token (they name
 * agents, a session or a session namespace, never a secret); only the signature makes them binding.
 *
 * A token confined to a session namespace carries `v: 2`: a server that predates namespaces knows
 * only `v: 1` and refuses it, rather than ignoring the claim and reaching every session of the
 * token's agents. Every other token is still `v: 1`, as before.
 */
export const ACCESS_TOKEN_PREFIX = "awt_";
/** The longest a token lives: a leaked one is useless within minutes. */
export const MAX_ACCESS_TOKEN_TTL_S = 900;
/** Longer than any token this server signs (64 agent ids of 128 characters, base64url). */
const MAX_TOKEN_CHARS = 16_384;
const SIGNATURE_DOMAIN = "awaken access token v1\n";

export interface AccessTokenClaims {
  /** The token's id (`atok_…`), for logs and MCP session ownership; never a secret. */
  id: string;
  workspaceId: string;
  /** The API key that minted it: revoking that key ends the token. */
  keyId: string;
  agentIds: readonly string[] | null;
  sessionId: string | null;
  /** The prefix of the client session names the token is confined to; null: none. */
  sessionNamespace: string | null;
  operations: readonly AccessOperation[];
  issuedAt: number;
  expiresAt: number;
}

export function newAccessTokenId(): string {
  return `atok_${randomBytes(12).toString("base64url")}`;
}

/** Each signing key as a KeyObject, made once: an HMAC under a raw Buffer builds one per call. */
const keyObjects = new WeakMap<Buffer, KeyObject>();

function sign(key: Buffer, payload: string): Buffer {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac("sha256", keyObject).update(SIGNATURE_DOMAIN).update(payload).digest();
}

export function encodeAccessToken(key: Buffer, claims: AccessTokenClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      v: claims.sessionNamespace === null ? 1 : 2,
      id: claims.id,
      ws: claims.workspaceId,
      kid: claims.keyId,
      agents: claims.agentIds,
      sid: claims.sessionId,
      ...(claims.sessionNamespace === null ? {} : { ns: claims.sessionNamespace }),
      ops: claims.operations,
      iat: claims.issuedAt,
      exp: claims.expiresAt,
    }),
    "utf8",
  ).toString("base64url");
  return `${ACCESS_TOKEN_PREFIX}${payload}.${sign(key, payload).toString("base64url")}`;
}

/**
 * The claims of a token this server signed, or null: a bad signature, a malformed payload or any
 * field of the wrong type is no token (expiry is the caller's check, against its clock).
 */
export function decodeAccessToken(key: Buffer, token: string): AccessTokenClaims | null {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > MAX_TOKEN_CHARS) return null;
  const [payload, signature, ...rest] = token.slice(ACCESS_TOKEN_PREFIX.length).split(".");
  if (payload === undefined || signature === undefined || rest.length > 0) return null;
  const expected = sign(key, payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  return claimsOf(raw);
}

const isString = (value: unknown): value is string => typeof value === "string";

function claimsOf(raw: unknown): AccessTokenClaims | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  // v1: no namespace; v2: a namespace, always.
  if (!(r.v === 1 ? r.ns === undefined : r.v === 2 && isString(r.ns))) return null;
  if (!isString(r.id) || !isString(r.ws) || !isString(r.kid)) return null;
  if (!(r.agents === null || (Array.isArray(r.agents) && r.agents.every(isString)))) return null;
  if (!(r.sid === null || isString(r.sid))) return null;
  if (!Array.isArray(r.ops) || !r.ops.every(isAccessOperation)) return null;
  if (typeof r.iat !== "number" || typeof r.exp !== "number") return null;
  return {
    id: r.id,
    workspaceId: r.ws,
    keyId: r.kid,
    agentIds: r.agents as string[] | null,
    sessionId: r.sid,
    sessionNamespace: r.v === 2 ? (r.ns as string) : null,
    operations: r.ops,
    issuedAt: r.iat,
    expiresAt: r.exp,
  };
}
