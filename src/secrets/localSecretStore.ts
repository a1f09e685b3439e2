import {
  additionalData,
  CREDENTIAL_WRAP_PURPOSE,
  decrypt,
  deriveWrappingKey,
  ENVELOPE_FORMAT,
  encrypt,
  KEY_BYTES,
  newDataKey,
} from "./envelope.js";
import { SecretOpenError } from "./errors.js";
import type { MasterKey } from "./masterKey.js";
import type { RevisionIdentity, SealedRecordRewrapper, SealedSecret, SecretStore } from "./ports.js";

/**
 * The SecretStore of a self-hosted server: envelope encryption under a local master key. Seals with
 * the current key; opens with whichever held key the record names, so after a master key rotation the
 * retired key can stay here (read-only) until every record is re-sealed.
 */
export class LocalSecretStore implements SecretStore, SealedRecordRewrapper {
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly current: MasterKey,
    retired: readonly MasterKey[] = [],
  ) {
    for (const key of [current, ...retired]) this.keys.set(key.id, key.key);
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  holdsKey(masterKeyId: string): boolean {
    return this.keys.has(masterKeyId);
  }

  /** Master-key rotation: the same plaintext, a new data key, sealed under the current key. */
  async rewrap(identity: RevisionIdentity, sealed: SealedSecret): Promise<SealedSecret> {
    const plaintext = await this.open(identity, sealed);
    try {
      return await this.seal(identity, plaintext);
    } finally {
      plaintext.fill(0);
    }
  }

  async seal(identity: RevisionIdentity, plaintext: Buffer): Promise<SealedSecret> {
    checkIdentity(identity);
    const aad = additionalData(ENVELOPE_FORMAT, identity, this.current.id);
    const wrappingKey = deriveWrappingKey(this.current.key, CREDENTIAL_WRAP_PURPOSE);
    const dataKey = newDataKey();
    try {
      return {
        format: ENVELOPE_FORMAT,
        masterKeyId: this.current.id,
        wrappedKey: encrypt(wrappingKey, dataKey, aad),
        ciphertext: encrypt(dataKey, plaintext, aad),
      };
    } finally {
      dataKey.fill(0);
      wrappingKey.fill(0);
    }
  }

  async open(identity: RevisionIdentity, sealed: SealedSecret): Promise<Buffer> {
    checkIdentity(identity);
    if (sealed.format !== ENVELOPE_FORMAT) {
      throw new SecretOpenError("unsupported_format", identity, `unknown envelope format ${sealed.format}`);
    }
    const masterKey = this.keys.get(sealed.masterKeyId);
    if (!masterKey) {
      throw new SecretOpenError(
        "unknown_master_key",
        identity,
        `it was sealed under master key ${sealed.masterKeyId}, but this server holds ${[...this.keys.keys()].join(", ")}`,
      );
    }
    const aad = additionalData(sealed.format, identity, sealed.masterKeyId);
    const wrappingKey = deriveWrappingKey(masterKey, CREDENTIAL_WRAP_PURPOSE);
    const dataKey = decrypt(wrappingKey, sealed.wrappedKey, aad);
    wrappingKey.fill(0);
    try {
      const plaintext = dataKey?.length === KEY_BYTES ? decrypt(dataKey, sealed.ciphertext, aad) : null;
      if (!plaintext) {
        throw new SecretOpenError(
          "not_authentic",
          identity,
          "the sealed record does not authenticate for this credential, revision and workspace",
        );
      }
      return plaintext;
    } finally {
      dataKey?.fill(0);
    }
  }
}

/** A record is bound to one real revision; an empty id or revision 0 is a caller bug, never a row. */
function checkIdentity(identity: RevisionIdentity): void {
  if (
    !identity.credentialId ||
    !identity.workspaceId ||
    !Number.isSafeInteger(identity.revision) ||
    identity.revision < 1
  ) {
    throw new Error(`invalid revision identity ${JSON.stringify(identity)}`);
  }
}
