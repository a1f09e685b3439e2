import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEY_BYTES } from "./envelope.js";
import { MasterKeyError } from "./errors.js";

export const MASTER_KEY_ENV = "AWAKEN_MASTER_KEY";
export const MASTER_KEY_FILE = "master.key";

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
export function loadMasterKey(options: { env: NodeJS.ProcessEnv; dataDir: string }): {
  masterKey: MasterKey;
  source: MasterKeySource;
  file: string | null;
} {
  const fromEnv = options.env[MASTER_KEY_ENV];
  if (fromEnv) return { masterKey: masterKeyFromBase64(fromEnv, MASTER_KEY_ENV), source: "env", file: null };
  const file = join(options.dataDir, MASTER_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) return { masterKey: existing, source: "file", file };
  return { masterKey: generateKeyFile(options.dataDir, file), source: "generated", file };
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
