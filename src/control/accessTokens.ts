import { randomBytes } from "node:crypto";
import { type AccessOperation, isAccessOperation } from "./callerScope.js";
import { decodeSignedClaims, encodeSignedClaims, type SignedClaimsFormat } from "./signedClaims.js";

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
/** Longer than any token this server signs: 64 agent ids of 128 characters, base64url. */
const FORMAT: SignedClaimsFormat = {
  prefix: ACCESS_TOKEN_PREFIX,
  domain: "awaken access token v1\n",
  maxChars: 16_384,
};

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

export function encodeAccessToken(key: Buffer, claims: AccessTokenClaims): string {
  return encodeSignedClaims(FORMAT, key, {
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
  });
}

/**
 * The claims of a token this server signed, or null: a bad signature, a malformed payload or any
 * field of the wrong type is no token (expiry is the caller's check, against its clock).
 */
export function decodeAccessToken(key: Buffer, token: string): AccessTokenClaims | null {
  const raw = decodeSignedClaims(FORMAT, key, token);
  return raw === null ? null : claimsOf(raw);
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
