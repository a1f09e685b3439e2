import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { RevisionIdentity } from "./ports.js";

// The envelope (format 1 in src/secrets/README.md; it held every tamper test): an HKDF-derived
// wrapping key per purpose, a random data key per credential revision, AES-256-GCM on both layers,
// and the ordered tuple [format, credential id, revision, workspace id, master key id] as additional
// authenticated data. Pure functions over Buffers; key custody lives in localSecretStore.ts.

export const ENVELOPE_FORMAT = 1;
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const CIPHER = "aes-256-gcm";

/**
 * HKDF inputs. One purpose per kind of material: a key derived for wrapping credential data keys is
 * useless for anything else the master key may protect later. Changing either string changes every
 * wrapping key, so they are part of the format.
 */
const HKDF_SALT = Buffer.from("awaken secret store v1", "utf8");
export const CREDENTIAL_WRAP_PURPOSE = "awaken/credential-revision/data-key-wrap/v1";
/** The HMAC key application access tokens are signed with (Control's IAM holds it). */
export const ACCESS_TOKEN_SIGNING_PURPOSE = "awaken/iam/access-token-hmac/v1";
/** The HMAC key API keys are stored under (Control's IAM holds it), so a stolen database checks no guess. */
export const API_KEY_HASH_PURPOSE = "awaken/iam/api-key-hmac/v1";
/** The HMAC key user profiles' action and enrollment URLs are signed with (Control holds it). */
export const USER_PROFILE_ACTION_PURPOSE = "awaken/control/user-profile-action-hmac/v1";

/** The key-encryption key for one purpose. The caller zeroes it after use. */
export function deriveWrappingKey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, HKDF_SALT, Buffer.from(purpose, "utf8"), KEY_BYTES));
}

export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * The authenticated data of one record. JSON of an array is an unambiguous encoding of the tuple
 * (strings are quoted and escaped), so no two identities share an encoding.
 */
export function additionalData(format: number, identity: RevisionIdentity, masterKeyId: string): Buffer {
  return Buffer.from(
    JSON.stringify([format, identity.credentialId, identity.revision, identity.workspaceId, masterKeyId]),
    "utf8",
  );
}

/** AES-256-GCM with a fresh random IV. Layout: iv ‖ tag ‖ ciphertext. */
export function encrypt(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/**
 * The inverse of `encrypt`, or null when the blob does not authenticate (wrong key, other AAD, any
 * changed byte). Nothing decrypted before the tag check is returned: partial output is zeroed.
 */
export function decrypt(key: Buffer, blob: Buffer, aad: Buffer): Buffer | null {
  if (blob.length < IV_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv(CIPHER, key, blob.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(blob.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const head = decipher.update(blob.subarray(IV_BYTES + TAG_BYTES));
  try {
    const tail = decipher.final();
    const plaintext = Buffer.concat([head, tail]);
    tail.fill(0);
    return plaintext;
  } catch {
    return null;
  } finally {
    head.fill(0);
  }
}
