import { PlatformError } from "../kernel/errors.js";
import type { RevisionIdentity } from "./ports.js";

/**
 * Why a sealed record did not open. The reasons are deliberately coarse: a ciphertext moved to
 * another row, a flipped bit, a stale revision, another workspace and a wrong key all look the same
 * to AES-GCM (`not_authentic`), and telling them apart would need information an attacker could use.
 */
export type SecretOpenFailure =
  /** The record names a master key this process does not hold (rotated away, or another server's). */
  | "unknown_master_key"
  /** The record's envelope format is not one this build reads. */
  | "unsupported_format"
  /** Authentication failed: tampered, moved, stale, or sealed under another key with the same id. */
  | "not_authentic";

/** A sealed record that must not be used. Carries ids only, never material. */
export class SecretOpenError extends PlatformError<SecretOpenFailure> {
  readonly reason: SecretOpenFailure;
  readonly identity: RevisionIdentity;

  constructor(reason: SecretOpenFailure, identity: RevisionIdentity, detail: string) {
    super(
      reason,
      `credential ${identity.credentialId} revision ${identity.revision} (workspace ${identity.workspaceId}) ` +
        `did not open: ${detail}`,
    );
    this.name = "SecretOpenError";
    this.reason = reason;
    this.identity = identity;
  }
}

/** The master key is missing, malformed or too exposed to use; the server refuses to start. */
export class MasterKeyError extends PlatformError {
  constructor(message: string) {
    super("master_key_unusable", message);
    this.name = "MasterKeyError";
  }
}
