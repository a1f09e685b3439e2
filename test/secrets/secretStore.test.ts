import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretOpenError } from "../../src/secrets/errors.js";
import { FieldSealer } from "../../src/secrets/fieldSealer.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { type MasterKey, masterKeyId } from "../../src/secrets/masterKey.js";
import type { RevisionIdentity, SealedSecret, SecretStore } from "../../src/secrets/ports.js";
import { decodeFields } from "../../src/secrets/secretFields.js";

function newMasterKey(): MasterKey {
  const key = randomBytes(32);
  return { id: masterKeyId(key), key };
}

const A: RevisionIdentity = { credentialId: "vcrd_a", revision: 1, workspaceId: "wrkspc_1" };
const SECRET = Buffer.from("sk-planted-7f3a9c", "utf8");

async function expectOpenFailure(
  store: SecretStore,
  identity: RevisionIdentity,
  sealed: SealedSecret,
  reason: SecretOpenError["reason"],
): Promise<void> {
  const error = await store.open(identity, sealed).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretOpenError);
  expect((error as SecretOpenError).reason).toBe(reason);
  // Errors name ids, never material.
  expect((error as Error).message).not.toContain(SECRET.toString("utf8"));
}

function flip(buffer: Buffer, index: number): Buffer {
  const copy = Buffer.from(buffer);
  copy[index] = (copy[index] as number) ^ 0x01;
  return copy;
}

describe("LocalSecretStore: the envelope opens only for the exact revision it was sealed for", () => {
  const master = newMasterKey();
  const store = new LocalSecretStore(master);

  it("round-trips, and the sealed record does not contain the plaintext", async () => {
    const sealed = await store.seal(A, SECRET);
    expect(sealed.masterKeyId).toBe(master.id);
    expect(sealed.format).toBe(1);
    expect(Buffer.concat([sealed.wrappedKey, sealed.ciphertext]).includes(SECRET)).toBe(false);
    expect((await store.open(A, sealed)).equals(SECRET)).toBe(true);
  });

  it("a ciphertext moved to another credential, a stale revision or another workspace does not open", async () => {
    const sealed = await store.seal(A, SECRET);
    await expectOpenFailure(store, { ...A, credentialId: "vcrd_b" }, sealed, "not_authentic");
    await expectOpenFailure(store, { ...A, revision: 2 }, sealed, "not_authentic");
    await expectOpenFailure(store, { ...A, workspaceId: "wrkspc_2" }, sealed, "not_authentic");
  });

  it("a flipped bit anywhere in either layer fails closed", async () => {
    const sealed = await store.seal(A, SECRET);
    for (const index of [0, 12, 27, sealed.ciphertext.length - 1]) {
      await expectOpenFailure(
        store,
        A,
        { ...sealed, ciphertext: flip(sealed.ciphertext, index) },
        "not_authentic",
      );
    }
    for (const index of [0, 12, 27, sealed.wrappedKey.length - 1]) {
      await expectOpenFailure(
        store,
        A,
        { ...sealed, wrappedKey: flip(sealed.wrappedKey, index) },
        "not_authentic",
      );
    }
  });

  it("a data key spliced from another record does not open this record's material", async () => {
    const mine = await store.seal(A, SECRET);
    const other = await store.seal(A, Buffer.from("another secret"));
    await expectOpenFailure(store, A, { ...mine, wrappedKey: other.wrappedKey }, "not_authentic");
  });

  it("a wrong master key fails closed, whether the record names it or not", async () => {
    const sealed = await store.seal(A, SECRET);
    const other = new LocalSecretStore(newMasterKey());
    await expectOpenFailure(other, A, sealed, "unknown_master_key");
    // A record whose key id was edited to the other key's id still fails: the id is authenticated.
    const otherKey = newMasterKey();
    await expectOpenFailure(
      new LocalSecretStore(otherKey),
      A,
      { ...sealed, masterKeyId: otherKey.id },
      "not_authentic",
    );
    // Same id, different key bytes (a forged or corrupted key file).
    await expectOpenFailure(
      new LocalSecretStore({ id: master.id, key: randomBytes(32) }),
      A,
      sealed,
      "not_authentic",
    );
  });

  it("an unknown envelope format or a truncated blob fails closed", async () => {
    const sealed = await store.seal(A, SECRET);
    await expectOpenFailure(store, A, { ...sealed, format: 2 }, "unsupported_format");
    await expectOpenFailure(
      store,
      A,
      { ...sealed, ciphertext: sealed.ciphertext.subarray(0, 20) },
      "not_authentic",
    );
  });

  it("a retired master key still opens what it sealed; new records use the current key", async () => {
    const old = newMasterKey();
    const sealedBefore = await new LocalSecretStore(old).seal(A, SECRET);
    const rotated = new LocalSecretStore(newMasterKey(), [old]);
    expect((await rotated.open(A, sealedBefore)).equals(SECRET)).toBe(true);
    expect((await rotated.seal(A, SECRET)).masterKeyId).not.toBe(old.id);
  });
});

/** A SecretStore that records what it was given, to check what the sealer opens and zeroes. */
class SpyStore implements SecretStore {
  readonly sealedPlaintexts: Buffer[] = [];
  readonly opened: Buffer[] = [];
  opens = 0;
  constructor(private readonly inner: SecretStore) {}
  async seal(identity: RevisionIdentity, plaintext: Buffer) {
    this.sealedPlaintexts.push(plaintext);
    return this.inner.seal(identity, plaintext);
  }
  async open(identity: RevisionIdentity, sealed: SealedSecret) {
    this.opens++;
    const plaintext = await this.inner.open(identity, sealed);
    this.opened.push(plaintext);
    return plaintext;
  }
}

describe("FieldSealer: a rotation re-seals revision n+1 from revision n", () => {
  const inner = new LocalSecretStore(newMasterKey());
  const B2 = { ...A, revision: 2 };

  it("keeps untouched fields, replaces and removes the patched ones, and zeroes every plaintext", async () => {
    const spy = new SpyStore(inner);
    const sealer = new FieldSealer(spy);
    const first = await sealer.seal(A, {
      access_token: "at-1",
      refresh_token: "rt-1",
      client_secret: "cs-1",
    });
    expect(first.fieldNames).toEqual(["access_token", "client_secret", "refresh_token"]);
    const second = await sealer.reseal(
      { identity: A, sealed: first.sealed, fieldNames: first.fieldNames },
      B2,
      { access_token: "at-2", client_secret: null },
    );
    expect(second.fieldNames).toEqual(["access_token", "refresh_token"]);
    const opened = await inner.open(B2, second.sealed);
    const fields = decodeFields(opened);
    expect(fields.get("access_token")?.toString()).toBe("at-2");
    expect(fields.get("refresh_token")?.toString()).toBe("rt-1");
    expect(fields.has("client_secret")).toBe(false);
    // Revision 1 is untouched and still opens as it was (a session pinned to it keeps it).
    expect(
      decodeFields(await inner.open(A, first.sealed))
        .get("access_token")
        ?.toString(),
    ).toBe("at-1");
    for (const buffer of [...spy.sealedPlaintexts, ...spy.opened]) {
      expect(buffer.every((byte) => byte === 0)).toBe(true);
    }
  });

  it("a rotation that replaces every field never opens the previous revision", async () => {
    const spy = new SpyStore(inner);
    const sealer = new FieldSealer(spy);
    const first = await sealer.seal(A, { token: "t-1" });
    await sealer.reseal({ identity: A, sealed: first.sealed, fieldNames: first.fieldNames }, B2, {
      token: "t-2",
    });
    expect(spy.opens).toBe(0);
  });

  it("a rotation that must keep a field refuses when the previous revision does not open", async () => {
    const sealer = new FieldSealer(inner);
    const first = await sealer.seal(A, { secret_value: "v-1" });
    const moved = {
      identity: { ...A, credentialId: "vcrd_other" },
      sealed: first.sealed,
      fieldNames: first.fieldNames,
    };
    await expect(sealer.reseal(moved, B2, {})).rejects.toBeInstanceOf(SecretOpenError);
  });
});
