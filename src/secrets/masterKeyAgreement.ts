import { rmSync } from "node:fs";
import { MasterKeyError } from "./errors.js";
import {
  createMasterKeyFile,
  MASTER_KEY_ENV,
  MASTER_KEY_RETIRED_ENV,
  type MasterKey,
  type MasterKeySource,
  masterKeyFile,
} from "./masterKey.js";

/**
 * What the database records of the master key: the id (never the key) the installation agreed on,
 * and the ids stored revisions were sealed under. The stores implement it (`SqlInstallationFacts`).
 */
export interface MasterKeyFacts {
  get(name: "master_key_id"): Promise<string | null>;
  /** Records `value` unless the fact exists; returns the fact's value either way. */
  claim(name: "master_key_id", value: string, now: number): Promise<string>;
  /** Moves the fact from `from` to `to`; false when it no longer holds `from`. */
  replace(name: "master_key_id", from: string, to: string, now: number): Promise<boolean>;
  /** Every master key id some stored credential revision is sealed under. */
  sealedMasterKeyIds(): Promise<string[]>;
}

export interface LoadedMasterKey {
  masterKey: MasterKey;
  source: MasterKeySource;
  file: string | null;
}

/**
 * Makes this process's master key agree with the database before anything is sealed or opened.
 * The database records the id (never the key) of the key its credentials are sealed under; a
 * process refuses to start when it lacks that key or any key a stored revision names, and it never
 * generates a key for a database that already has one (a second replica with its own data dir).
 * A rotation moves the recorded id to the new key once a process holds the old one as retired.
 */
export async function agreeOnMasterKey(input: {
  facts: MasterKeyFacts;
  /** The configured key, or null when neither `AWAKEN_MASTER_KEY` nor `<dataDir>/master.key` exists. */
  found: LoadedMasterKey | null;
  retiredIds: readonly string[];
  dataDir: string;
  now: number;
}): Promise<LoadedMasterKey> {
  const { facts, found, dataDir, now } = input;
  const recorded = await facts.get("master_key_id");
  const sealed = await facts.sealedMasterKeyIds();
  if (!found) {
    const known = [...new Set([...(recorded ? [recorded] : []), ...sealed])];
    if (known.length > 0) throw noKeyError(known, dataDir);
    const generated = createMasterKeyFile(dataDir);
    const winner = await facts.claim("master_key_id", generated.masterKey.id, now);
    if (winner !== generated.masterKey.id) {
      // Another replica generated its key at the same moment; nothing was sealed under ours.
      generated.masterKey.key.fill(0);
      rmSync(masterKeyFile(dataDir), { force: true });
      throw noKeyError([winner], dataDir);
    }
    return generated;
  }
  const current = found.masterKey.id;
  const held = new Set([current, ...input.retiredIds]);
  const missing = [...new Set([...(recorded ? [recorded] : []), ...sealed])].filter((id) => !held.has(id));
  if (missing.length > 0) throw mismatchError(missing, found);
  if (recorded === null) {
    const winner = await facts.claim("master_key_id", current, now);
    if (!held.has(winner)) throw mismatchError([winner], found);
  } else if (recorded !== current) {
    // This process holds the recorded key as retired: the installation has moved on to ours.
    await facts.replace("master_key_id", recorded, current, now);
  }
  return found;
}

const SHARE_HINT =
  `Every server on one database must hold the same master key: set ${MASTER_KEY_ENV} (base64 of the key) ` +
  "to the same value on every replica, e.g. the contents of the first server's <data-dir>/master.key";

function noKeyError(ids: string[], dataDir: string): MasterKeyError {
  return new MasterKeyError(
    `this database's credentials are sealed under master key ${ids.join(", ")}, and this server has no master key ` +
      `(${MASTER_KEY_ENV} is not set and ${masterKeyFile(dataDir)} does not exist); it will not generate a second one. ` +
      `${SHARE_HINT}, or restore that file.`,
  );
}

function mismatchError(ids: string[], found: LoadedMasterKey): MasterKeyError {
  const where = found.source === "env" ? MASTER_KEY_ENV : (found.file ?? "its data dir");
  return new MasterKeyError(
    `this database's credentials are sealed under master key ${ids.join(", ")}, which this server does not hold ` +
      `(its master key is ${found.masterKey.id}, from ${where}). ${SHARE_HINT}. During a rotation, keep the old key ` +
      `in ${MASTER_KEY_RETIRED_ENV} until \`awaken secrets reseal\` reports 0 revisions remaining.`,
  );
}
