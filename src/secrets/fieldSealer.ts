import type {
  CredentialOpener,
  CredentialSealer,
  PreviousRevision,
  RevisionIdentity,
  SealedFields,
  SealedSecret,
  SecretStore,
} from "./ports.js";
import { decodeFields, encodeFields } from "./secretFields.js";

/**
 * Vault ingress's view of custody, on top of any SecretStore: named secret fields in, one sealed
 * record per revision out. Every Buffer holding material is zeroed before the call returns. The
 * strings handed in are the request's own (JSON parsing already made them); none is made here.
 */
export class FieldSealer implements CredentialSealer, CredentialOpener {
  constructor(private readonly store: SecretStore) {}

  async seal(identity: RevisionIdentity, fields: Readonly<Record<string, string>>): Promise<SealedFields> {
    return this.sealMap(identity, toBuffers(fields));
  }

  async reseal(
    previous: PreviousRevision,
    next: RevisionIdentity,
    patch: Readonly<Record<string, string | null>>,
  ): Promise<SealedFields> {
    const kept = previous.fieldNames.filter((name) => !(name in patch));
    const replaced = toBuffers(
      Object.fromEntries(
        Object.entries(patch).filter((entry): entry is [string, string] => entry[1] !== null),
      ),
    );
    // Only a rotation that keeps a field needs the old material; one that replaces every field
    // (the common token rotation) never opens the previous revision at all.
    let opened: Buffer | null = null;
    try {
      if (kept.length > 0) {
        opened = await this.store.open(previous.identity, previous.sealed);
        const old = decodeFields(opened);
        for (const name of kept) {
          const value = old.get(name);
          if (value) replaced.set(name, value);
        }
      }
      return await this.sealMap(next, replaced);
    } finally {
      opened?.fill(0);
    }
  }

  async openField(identity: RevisionIdentity, sealed: SealedSecret, field: string): Promise<Buffer | null> {
    const opened = await this.store.open(identity, sealed);
    try {
      const value = decodeFields(opened).get(field);
      // A copy: the view dies with `opened`, which is zeroed below whatever happens.
      return value ? Buffer.from(value) : null;
    } finally {
      opened.fill(0);
    }
  }

  private async sealMap(identity: RevisionIdentity, fields: Map<string, Buffer>): Promise<SealedFields> {
    const plaintext = encodeFields(fields);
    try {
      return { sealed: await this.store.seal(identity, plaintext), fieldNames: [...fields.keys()].sort() };
    } finally {
      plaintext.fill(0);
      // Views into an opened record are zeroed with it by the caller; zeroing twice is harmless.
      for (const value of fields.values()) value.fill(0);
    }
  }
}

function toBuffers(fields: Readonly<Record<string, string>>): Map<string, Buffer> {
  return new Map(Object.entries(fields).map(([name, value]) => [name, Buffer.from(value, "utf8")]));
}
