import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { KEY_BYTES } from "./envelope.js";
import { MasterKeyError } from "./errors.js";

export const MASTER_KEY_ENV = "AWAKEN_MASTER_KEY";
export const MASTER_KEY_FILE = "master.key";
/** Retired keys (open only, never seal): comma-separated base64 keys. */
export const MASTER_KEY_RETIRED_ENV = "AWAKEN_MASTER_KEY_RETIRED";
/** Retired key files: `<dataDir>/master.key.retired-<anything>` (the rotation names them by key id). */
export const RETIRED_KEY_FILE_PREFIX = `${MASTER_KEY_FILE}.retired-`;

/** The root of the envelope. `key` lives for the process; `id` is stored with every sealed record. */
export interface MasterKey {
  id: string;
  key: Buffer;
}

export type MasterKeySource = "env" | "file" | "generated";

/**
 * A stable, non-secret name for a key: the first 8 bytes of SHA-256 over a domain-separated input.
 * It lets a record say which key sealed it, so a retired key can still open old records after a
 * rotation, and a record sealed under a key this server lacks fails with a clear reason.
 */
export function masterKeyId(key: Buffer): string {
  return createHash("sha256")
    .update("awaken master key id\0")
    .update(key)
    .digest()
    .subarray(0, 8)
    .toString("hex");
}

const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/;

/** Decodes a base64 32-byte key, naming where it came from (never its value) when it is not one. */
export function masterKeyFromBase64(text: string, where: string): MasterKey {
  const trimmed = text.trim();
  const key = BASE64_KEY.test(trimmed) ? Buffer.from(trimmed, "base64") : null;
  if (!key || key.length !== KEY_BYTES) {
    throw new MasterKeyError(
      `${where} must hold exactly ${KEY_BYTES} random bytes in base64 (44 characters); generate one with ` +
        "`node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"`",
    );
  }
  return { id: masterKeyId(key), key };
}

/**
 * The master key: `AWAKEN_MASTER_KEY` (base64) when set, else `<dataDir>/master.key`, generated once
 * with mode 0600. A key file that anyone but its owner may read or write is refused rather than
 * used: whoever can read it can open every credential in the database.
 */
export function loadMasterKey(options: { env: NodeJS.ProcessEnv; dataDir: string; generate?: boolean }): {
  masterKey: MasterKey;
  source: MasterKeySource;
  file: string | null;
} {
  const found = findMasterKey(options);
  if (found) return found;
  if (options.generate === false) {
    throw new MasterKeyError(
      `no master key: ${MASTER_KEY_ENV} is not set and ${masterKeyFile(options.dataDir)} does not exist`,
    );
  }
  return createMasterKeyFile(options.dataDir);
}

export function masterKeyFile(dataDir: string): string {
  return join(dataDir, MASTER_KEY_FILE);
}

/** The configured master key (`AWAKEN_MASTER_KEY`, else `<dataDir>/master.key`), or null: none yet. */
export function findMasterKey(options: { env: NodeJS.ProcessEnv; dataDir: string }): {
  masterKey: MasterKey;
  source: "env" | "file";
  file: string | null;
} | null {
  const fromEnv = options.env[MASTER_KEY_ENV];
  if (fromEnv) return { masterKey: masterKeyFromBase64(fromEnv, MASTER_KEY_ENV), source: "env", file: null };
  const file = masterKeyFile(options.dataDir);
  const existing = readKeyFile(file);
  return existing ? { masterKey: existing, source: "file", file } : null;
}

/** Generates `<dataDir>/master.key` (0600; a key another process wrote a moment ago is used instead). */
export function createMasterKeyFile(dataDir: string): {
  masterKey: MasterKey;
  source: MasterKeySource;
  file: string;
} {
  const file = masterKeyFile(dataDir);
  return { masterKey: generateKeyFile(dataDir, file), source: "generated", file };
}

/** A retired key and where it came from (the variable, or a file path): for logs, never the key. */
export interface RetiredMasterKey {
  masterKey: MasterKey;
  source: string;
}

/**
 * The retired master keys: records sealed under them still open, nothing new is sealed under them
 * (a rotation's window, until `awaken secrets reseal` re-sealed every revision under the current
 * key). From `AWAKEN_MASTER_KEY_RETIRED` (comma-separated base64 keys) and every
 * `<dataDir>/master.key.retired-*` file, each file held to the same rule as `master.key` (a regular
 * file only its owner can reach). A key equal to the current one, or listed twice, is used once.
 */
export function loadRetiredMasterKeys(options: {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  currentId: string;
}): RetiredMasterKey[] {
  const out = new Map<string, RetiredMasterKey>();
  const add = (masterKey: MasterKey, source: string) => {
    if (masterKey.id === options.currentId || out.has(masterKey.id)) {
      masterKey.key.fill(0);
      return;
    }
    out.set(masterKey.id, { masterKey, source });
  };
  const fromEnv = options.env[MASTER_KEY_RETIRED_ENV] ?? "";
  fromEnv
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .forEach((part, index) => {
      add(
        masterKeyFromBase64(part, `${MASTER_KEY_RETIRED_ENV} (entry ${index + 1})`),
        MASTER_KEY_RETIRED_ENV,
      );
    });
  for (const file of retiredKeyFiles(options.dataDir)) {
    const key = readKeyFile(file);
    if (key) add(key, file);
  }
  return [...out.values()];
}

function retiredKeyFiles(dataDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return names
    .filter(
      (name) => name.startsWith(RETIRED_KEY_FILE_PREFIX) && name.length > RETIRED_KEY_FILE_PREFIX.length,
    )
    .sort()
    .map((name) => join(dataDir, name));
}

/** Reads a key file someone else prepared (e.g. `--new-key-file`), under the same rules as `master.key`. */
export function readMasterKeyFile(file: string): MasterKey {
  const key = readKeyFile(file);
  if (!key) throw new MasterKeyError(`key file ${file} does not exist`);
  return key;
}

export function generateMasterKey(): MasterKey {
  const key = randomBytes(KEY_BYTES);
  return { id: masterKeyId(key), key };
}

/**
 * Step 1 of a master-key rotation of a file-based key: the current `<dataDir>/master.key` is kept
 * as `<dataDir>/master.key.retired-<its id>` (0600; written first, so the old key is never lost),
 * then `newKey` replaces `master.key` atomically (a 0600 temporary file, fsynced, renamed over it).
 * Safe to run again after a crash between the two steps (an existing retired file must hold the
 * same key). Nothing is re-sealed here; servers pick the new key up when they restart.
 */
export function rotateMasterKeyFile(
  dataDir: string,
  newKey: MasterKey,
): { previousId: string; retiredFile: string; currentId: string; file: string } {
  const file = join(dataDir, MASTER_KEY_FILE);
  const current = readKeyFile(file);
  if (!current) {
    throw new MasterKeyError(`${file} does not exist: there is no file-based master key to rotate`);
  }
  try {
    if (current.id === newKey.id) {
      throw new MasterKeyError(`the new key is the current master key (${current.id}); nothing to rotate`);
    }
    const retiredFile = join(dataDir, `${RETIRED_KEY_FILE_PREFIX}${current.id}`);
    writeKeyFile(retiredFile, current.key, { exclusive: true, sameKeyOk: current.id });
    const temporary = join(dataDir, `${MASTER_KEY_FILE}.new`);
    writeKeyFile(temporary, newKey.key, { exclusive: false });
    renameSync(temporary, file);
    syncDirectory(dataDir);
    return { previousId: current.id, retiredFile, currentId: newKey.id, file };
  } finally {
    current.key.fill(0);
  }
}

/** Writes `key` (base64) with mode 0600 and fsyncs it. */
function writeKeyFile(file: string, key: Buffer, options: { exclusive: boolean; sameKeyOk?: string }): void {
  const text = Buffer.from(`${key.toString("base64")}\n`, "utf8");
  try {
    if (!options.exclusive) {
      try {
        unlinkSync(file); // a leftover of an interrupted run: nothing was ever sealed under it
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && options.sameKeyOk) {
        const existing = readKeyFile(file);
        const same = existing?.id === options.sameKeyOk;
        existing?.key.fill(0);
        if (same) return;
        throw new MasterKeyError(`${file} exists and holds another key; move it away first`);
      }
      throw error;
    }
    try {
      writeFileSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(file, 0o600);
  } finally {
    text.fill(0);
  }
}

function syncDirectory(dir: string): void {
  if (process.platform === "win32") return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readKeyFile(file: string): MasterKey | null {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  if (!stat.isFile()) throw new MasterKeyError(`master key ${file} is not a regular file`);
  // Mode bits mean nothing on Windows; everywhere else group/other access is a refusal.
  if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
    throw new MasterKeyError(
      `master key ${file} has mode ${mode}: users other than its owner can reach it. ` +
        `Run \`chmod 600 ${file}\` (and rotate the key if someone else may have read it), ` +
        `or pass the key in ${MASTER_KEY_ENV} instead.`,
    );
  }
  const raw = readFileSync(file);
  try {
    return masterKeyFromBase64(raw.toString("utf8"), `master key ${file}`);
  } finally {
    raw.fill(0);
  }
}

function generateKeyFile(dataDir: string, file: string): MasterKey {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  const text = Buffer.from(`${key.toString("base64")}\n`, "utf8");
  try {
    // `wx`: never overwrite a key another process wrote a moment ago; its records would be lost.
    writeFileSync(file, text, { mode: 0o600, flag: "wx" });
  } catch (error) {
    key.fill(0);
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      const raced = readKeyFile(file);
      if (raced) return raced;
    }
    throw error;
  } finally {
    text.fill(0);
  }
  chmodSync(file, 0o600);
  return { id: masterKeyId(key), key };
}
