/**
 * The SecretStore port: the one way credential material is sealed at ingress and opened for a holder.
 * Implementations: `LocalSecretStore` (envelope encryption under a local master key). A KMS or an
 * external vault plugs in behind the same two calls (see README.md).
 */

/**
 * Which exact credential revision a sealed record belongs to. It is bound into the ciphertext as
 * additional authenticated data, and callers take it from the database row that holds the record,
 * never from the record itself: a ciphertext copied to another credential, revision or workspace
 * does not open.
 */
export interface RevisionIdentity {
  credentialId: string;
  revision: number;
  workspaceId: string;
}

/**
 * What a store keeps for one revision. Every field is stored in its own column next to the identity;
 * `format` and `masterKeyId` are authenticated too, so editing them in the row breaks the open.
 */
export interface SealedSecret {
  /** Envelope format version (part of the authenticated data). */
  format: number;
  /** Names the key-encryption key (rotation picks the key by it). Never the key itself. */
  masterKeyId: string;
  /** The per-revision data key, encrypted under the key-encryption key. */
  wrappedKey: Buffer;
  /** The material, encrypted under the data key. */
  ciphertext: Buffer;
}

/**
 * Seal/open on raw bytes. Both fail closed: `open` throws `SecretOpenError` for any record that does
 * not authenticate against the identity given, and returns nothing partial. The caller owns the
 * plaintext Buffers on both sides and zeroes them (`buf.fill(0)`) when done.
 */
export interface SecretStore {
  seal(identity: RevisionIdentity, plaintext: Buffer): Promise<SealedSecret>;
  open(identity: RevisionIdentity, sealed: SealedSecret): Promise<Buffer>;
}

/** A sealed revision and the names (never values) of the secret fields inside it. */
export interface SealedFields {
  sealed: SealedSecret;
  fieldNames: string[];
}

/** The previous revision a rotation starts from, as read from its row. */
export interface PreviousRevision {
  identity: RevisionIdentity;
  sealed: SealedSecret;
  fieldNames: readonly string[];
}

/**
 * What vault ingress (Control) asks of custody. A credential's secret part is a small set of named
 * fields (`token`, `refresh_token`, …). Rotation seals revision n+1 from revision n plus a patch
 * (a string replaces a field, `null` removes it, absent keeps it), so the fields a rotation keeps are
 * re-sealed inside `secrets/` and never reach the caller in plaintext.
 */
export interface CredentialSealer {
  seal(identity: RevisionIdentity, fields: Readonly<Record<string, string>>): Promise<SealedFields>;
  reseal(
    previous: PreviousRevision,
    next: RevisionIdentity,
    patch: Readonly<Record<string, string | null>>,
  ): Promise<SealedFields>;
}

/**
 * What admission asks of custody once a pin passed its checks: one named field of one exact
 * revision, for one holder. The rest of the opened record is zeroed inside `secrets/`; the caller
 * owns the returned Buffer and zeroes it once the holder took it. Throws `SecretOpenError` when the
 * record does not authenticate against the identity (taken from the row, never from the record).
 */
export interface CredentialOpener {
  openField(identity: RevisionIdentity, sealed: SealedSecret, field: string): Promise<Buffer | null>;
}

/**
 * What a master-key rotation's re-seal asks of custody: re-seal one stored record under the key new
 * records are sealed under, without the plaintext ever leaving `secrets/`. The identity comes from
 * the row the record is stored in (as for every open), so the new record is bound to the same row.
 */
export interface SealedRecordRewrapper {
  /** The id of the key `seal` and `rewrap` seal under. */
  readonly currentKeyId: string;
  /** Whether a record naming this key id can be opened here. */
  holdsKey(masterKeyId: string): boolean;
  /**
   * Opens `sealed` as `identity` and seals the same plaintext (with a new data key) under the
   * current key; the plaintext is zeroed. Throws `SecretOpenError` (fail closed) when it does not open.
   */
  rewrap(identity: RevisionIdentity, sealed: SealedSecret): Promise<SealedSecret>;
}

/**
 * A sealer Control lends another context (in process, or a split Coordinator's over the private
 * link): it seals and opens one family of identities only (`scopedSealers.ts`), so the borrower
 * never opens a vault credential, nor another family's secrets, with it. The field names of what
 * it sealed stay with Control.
 */
export interface ScopedSealer extends CredentialOpener {
  seal(
    identity: RevisionIdentity,
    fields: Readonly<Record<string, string>>,
  ): Promise<{ sealed: SealedSecret }>;
}
