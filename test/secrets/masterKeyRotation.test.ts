import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MasterKeyError } from "../../src/secrets/errors.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import {
  generateMasterKey,
  loadMasterKey,
  loadRetiredMasterKeys,
  MASTER_KEY_FILE,
  masterKeyId,
  readMasterKeyFile,
  rotateMasterKeyFile,
} from "../../src/secrets/masterKey.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "awaken-master-key-rotation-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const identity = { credentialId: "vcrd_1", revision: 1, workspaceId: "wrkspc_1" };

describe("retired master keys", () => {
  it("come from AWAKEN_MASTER_KEY_RETIRED (comma-separated) and master.key.retired-* files, once each, never the current", () => {
    const current = randomBytes(32);
    const a = randomBytes(32);
    const b = randomBytes(32);
    const c = randomBytes(32);
    writeFileSync(join(dir, "master.key.retired-b"), `${b.toString("base64")}\n`, { mode: 0o600 });
    writeFileSync(join(dir, "master.key.retired-c"), `${c.toString("base64")}\n`, { mode: 0o600 });
    // The same key as a file and in the variable, and the current key listed too: each used once.
    writeFileSync(join(dir, "master.key.retired-a-again"), a.toString("base64"), { mode: 0o600 });
    writeFileSync(join(dir, "master.key.other"), "not a key", { mode: 0o644 }); // not a retired key file
    const retired = loadRetiredMasterKeys({
      env: { AWAKEN_MASTER_KEY_RETIRED: ` ${a.toString("base64")} ,, ${current.toString("base64")}` },
      dataDir: dir,
      currentId: masterKeyId(current),
    });
    expect(retired.map((r) => r.masterKey.id).sort()).toEqual([a, b, c].map(masterKeyId).sort());
    expect(retired.find((r) => r.masterKey.id === masterKeyId(a))?.source).toBe("AWAKEN_MASTER_KEY_RETIRED");
    expect(retired.find((r) => r.masterKey.id === masterKeyId(b))?.source).toBe(
      join(dir, "master.key.retired-b"),
    );
    expect(loadRetiredMasterKeys({ env: {}, dataDir: join(dir, "missing"), currentId: "x" })).toEqual([]);
  });

  it("a retired key file others can read, or a malformed entry, is refused without echoing it", () => {
    const key = randomBytes(32).toString("base64");
    writeFileSync(join(dir, "master.key.retired-old"), key, { mode: 0o600 });
    chmodSync(join(dir, "master.key.retired-old"), 0o640);
    expect(() => loadRetiredMasterKeys({ env: {}, dataDir: dir, currentId: "x" })).toThrow(
      /mode 0640.*chmod 600/,
    );
    rmSync(join(dir, "master.key.retired-old"));
    const attempt = () =>
      loadRetiredMasterKeys({
        env: { AWAKEN_MASTER_KEY_RETIRED: `${key},short-secret-value` },
        dataDir: dir,
        currentId: "x",
      });
    expect(attempt).toThrow(MasterKeyError);
    expect(attempt).toThrow(/AWAKEN_MASTER_KEY_RETIRED \(entry 2\)/);
    try {
      attempt();
    } catch (error) {
      expect(String(error)).not.toContain("short-secret-value");
      expect(String(error)).not.toContain(key);
    }
  });
});

describe("rotateMasterKeyFile (awaken secrets rotate-master-key)", () => {
  it("keeps the old key as master.key.retired-<id> (0600) and installs the new one; records under either open", async () => {
    const old = loadMasterKey({ env: {}, dataDir: dir }).masterKey;
    const sealedBefore = await new LocalSecretStore(old).seal(identity, Buffer.from("material"));
    const next = generateMasterKey();
    const nextId = next.id;
    const rotated = rotateMasterKeyFile(dir, next);
    expect(rotated).toEqual({
      previousId: old.id,
      retiredFile: join(dir, `master.key.retired-${old.id}`),
      currentId: nextId,
      file: join(dir, MASTER_KEY_FILE),
    });
    for (const file of [rotated.retiredFile, rotated.file]) expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual([MASTER_KEY_FILE, `master.key.retired-${old.id}`]);

    // What a restarted server loads: the new key current, the old one retired.
    const current = loadMasterKey({ env: {}, dataDir: dir, generate: false });
    expect(current.masterKey.id).toBe(nextId);
    const retired = loadRetiredMasterKeys({ env: {}, dataDir: dir, currentId: nextId });
    expect(retired.map((r) => r.masterKey.id)).toEqual([old.id]);
    const store = new LocalSecretStore(
      current.masterKey,
      retired.map((r) => r.masterKey),
    );
    expect((await store.open(identity, sealedBefore)).toString()).toBe("material");
    expect((await store.seal(identity, Buffer.from("x"))).masterKeyId).toBe(nextId);
  });

  it("is safe to run again after a crash between its two writes, and refuses the current key as the new one", () => {
    const old = loadMasterKey({ env: {}, dataDir: dir }).masterKey;
    // The retired copy was written, master.key not yet replaced (and a temporary file left behind).
    writeFileSync(join(dir, `master.key.retired-${old.id}`), `${old.key.toString("base64")}\n`, {
      mode: 0o600,
    });
    writeFileSync(join(dir, "master.key.new"), "half-written", { mode: 0o600 });
    const next = generateMasterKey();
    const nextId = next.id;
    rotateMasterKeyFile(dir, next);
    expect(loadMasterKey({ env: {}, dataDir: dir, generate: false }).masterKey.id).toBe(nextId);
    expect(readdirSync(dir).sort()).toEqual([MASTER_KEY_FILE, `master.key.retired-${old.id}`]);

    const same = readMasterKeyFile(join(dir, MASTER_KEY_FILE));
    expect(() => rotateMasterKeyFile(dir, same)).toThrow(/is the current master key/);
    // A retired file of that name holding another key is never overwritten.
    writeFileSync(join(dir, `master.key.retired-${nextId}`), `${randomBytes(32).toString("base64")}\n`, {
      mode: 0o600,
    });
    expect(() => rotateMasterKeyFile(dir, generateMasterKey())).toThrow(/holds another key/);
    expect(readFileSync(join(dir, MASTER_KEY_FILE), "utf8").trim()).toBe(same.key.toString("base64"));
  });

  it("has nothing to rotate without a key file, and never generates one when asked not to", () => {
    expect(() => rotateMasterKeyFile(dir, generateMasterKey())).toThrow(/does not exist/);
    expect(() => loadMasterKey({ env: {}, dataDir: dir, generate: false })).toThrow(/no master key/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
