import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The signed token in a user profile's action or enrollment URL: which profile, which action, until
 * when. It carries no secret (ids and a time); the signature, under a key derived from the master
 * key, is what makes a URL unforgeable. It travels in the URL's path, which the request log never
 * writes (it logs route patterns).
 */
export interface UserProfileActionClaims {
  workspaceId: string;
  userProfileId: string;
  /** `enroll_end_user` (an action URL) or `enrollment` (the beta enrollment URL). */
  action: "enroll_end_user" | "enrollment";
  expiresAt: number;
}

const PREFIX = "upa_";
const SIGNATURE_DOMAIN = "awaken user profile action v1\n";
const MAX_TOKEN_CHARS = 1024;

function sign(key: Buffer, payload: string): Buffer {
  return createHmac("sha256", key).update(SIGNATURE_DOMAIN).update(payload).digest();
}

export function encodeActionToken(key: Buffer, claims: UserProfileActionClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      v: 1,
      ws: claims.workspaceId,
      up: claims.userProfileId,
      a: claims.action,
      exp: claims.expiresAt,
    }),
    "utf8",
  ).toString("base64url");
  return `${PREFIX}${payload}.${sign(key, payload).toString("base64url")}`;
}

/** The claims of a token this server signed, or null (expiry is the caller's check, on its clock). */
export function decodeActionToken(key: Buffer, token: string): UserProfileActionClaims | null {
  if (!token.startsWith(PREFIX) || token.length > MAX_TOKEN_CHARS) return null;
  const [payload, signature, ...rest] = token.slice(PREFIX.length).split(".");
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
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (r.v !== 1 || typeof r.ws !== "string" || typeof r.up !== "string") return null;
  if (r.a !== "enroll_end_user" && r.a !== "enrollment") return null;
  if (typeof r.exp !== "number" || !Number.isSafeInteger(r.exp)) return null;
  return { workspaceId: r.ws, userProfileId: r.up, action: r.a, expiresAt: r.exp };
}
