import { decodeSignedClaims, encodeSignedClaims, type SignedClaimsFormat } from "./signedClaims.js";

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

const FORMAT: SignedClaimsFormat = {
  prefix: "upa_",
  domain: "awaken user profile action v1\n",
  maxChars: 1024,
};

export function encodeActionToken(key: Buffer, claims: UserProfileActionClaims): string {
  return encodeSignedClaims(FORMAT, key, {
    v: 1,
    ws: claims.workspaceId,
    up: claims.userProfileId,
    a: claims.action,
    exp: claims.expiresAt,
  });
}

/** The claims of a token this server signed, or null (expiry is the caller's check, on its clock). */
export function decodeActionToken(key: Buffer, token: string): UserProfileActionClaims | null {
  const raw = decodeSignedClaims(FORMAT, key, token);
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (r.v !== 1 || typeof r.ws !== "string" || typeof r.up !== "string") return null;
  if (r.a !== "enroll_end_user" && r.a !== "enrollment") return null;
  if (typeof r.exp !== "number" || !Number.isSafeInteger(r.exp)) return null;
  return { workspaceId: r.ws, userProfileId: r.up, action: r.a, expiresAt: r.exp };
}
