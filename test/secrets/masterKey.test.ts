import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MasterKeyError } from "../../src/secrets/errors.js";
import { loadMasterKey, MASTER_KEY_FILE, masterKeyId } from "../../src/secrets/masterKey.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "awaken-master-key-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the master key", () => {
  it("is generated once into <dataDir>/master.key with mode 0600, then read back unchanged", () => {
    const first = loadMasterKey({ env: {}, dataDir: dir });
    expect(first.source).toBe("generated");
    expect(first.masterKey.key).toHaveLength(32);
    const file = join(dir, MASTER_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadMasterKey({ env: {}, dataDir: dir });
    expect(again.source).toBe("file");
    expect(again.masterKey.id).toBe(first.masterKey.id);
    expect(again.masterKey.key.equals(first.masterKey.key)).toBe(true);
  });

  it("a key file readable by others (0644) is refused with a clear error, never used", () => {
    loadMasterKey({ env: {}, dataDir: dir });
    const file = join(dir, MASTER_KEY_FILE);
    chmodSync(file, 0o644);
    expect(() => loadMasterKey({ env: {}, dataDir: dir })).toThrow(MasterKeyError);
    expect(() => loadMasterKey({ env: {}, dataDir: dir })).toThrow(/mode 0644.*chmod 600/);
  });

  it("AWAKEN_MASTER_KEY (base64, 32 bytes) wins over the file; anything else is refused without echoing it", () => {
    const key = randomBytes(32);
    const loaded = loadMasterKey({ env: { AWAKEN_MASTER_KEY: key.toString("base64") }, dataDir: dir });
    expect(loaded.source).toBe("env");
    expect(loaded.masterKey.id).toBe(masterKeyId(key));
    for (const bad of ["too-short", randomBytes(16).toString("base64"), `${key.toString("base64")}!`]) {
      let message = "";
      try {
        loadMasterKey({ env: { AWAKEN_MASTER_KEY: bad }, dataDir: dir });
      } catch (error) {
        expect(error).toBeInstanceOf(MasterKeyError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/AWAKEN_MASTER_KEY must hold exactly 32 random bytes/);
      expect(message).not.toContain(bad);
    }
  });

  it("a malformed key file is refused, and the key id is not derived from anything but the key", () => {
    const file = join(dir, MASTER_KEY_FILE);
    writeFileSync(file, "not a key\n", { mode: 0o600 });
    expect(() => loadMasterKey({ env: {}, dataDir: dir })).toThrow(/must hold exactly 32 random bytes/);
    expect(readFileSync(file, "utf8")).toBe("not a key\n");
    expect(masterKeyId(Buffer.alloc(32, 1))).toMatch(/^[0-9a-f]{16}$/);
    expect(masterKeyId(Buffer.alloc(32, 1))).not.toBe(masterKeyId(Buffer.alloc(32, 2)));
  });
});
