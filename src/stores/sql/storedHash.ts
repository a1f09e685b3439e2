/**
 * A SHA-256 hex digest as a commit row stores it: base64url of its 32 bytes, 43 characters instead
 * of 64 (a row holds one or two, and every byte of a row is written to the WAL). Anything that is
 * not such a digest is stored as it is.
 */
export function storedHash(hash: string): string;
export function storedHash(hash: string | null): string | null;
export function storedHash(hash: string | null): string | null {
  return hash !== null && HEX_DIGEST.test(hash) ? Buffer.from(hash, "hex").toString("base64url") : hash;
}

/** The digest a stored hash stands for (`storedHash` undone). */
export function readHash(stored: string): string;
export function readHash(stored: string | null): string | null;
export function readHash(stored: string | null): string | null {
  return stored !== null && BASE64URL_DIGEST.test(stored)
    ? Buffer.from(stored, "base64url").toString("hex")
    : stored;
}

const HEX_DIGEST = /^[0-9a-f]{64}$/;
const BASE64URL_DIGEST = /^[A-Za-z0-9_-]{43}$/;
