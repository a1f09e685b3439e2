import { chmodSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { MASTER_KEY_FILE } from "../secrets/masterKey.js";

/** Entries of the data dir whose modes belong to someone else: the sandboxes' workspace root. */
const NOT_OURS = new Set(["workspaces"]);

/**
 * Only the server's user may reach the data dir: the directory 0700, every file directly in it
 * (the database and its -wal/-shm, the API key) 0600. Files of older versions were
 * created 0644; this tightens them at start and returns what it changed, for a log line. Nothing
 * is loosened and nothing is created; the workspaces below it keep the modes their owner sets.
 */
export function tightenDataDirModes(dataDir: string): string[] {
  const changed: string[] = [];
  const tighten = (path: string, wanted: number) => {
    const stat = lstatSync(path);
    if ((stat.mode & 0o777 & ~wanted) === 0) return;
    chmodSync(path, stat.mode & 0o777 & wanted);
    changed.push(`${path} ${(stat.mode & 0o777).toString(8)} → ${(stat.mode & 0o777 & wanted).toString(8)}`);
  };
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return changed;
    throw error;
  }
  if (process.platform === "win32") return changed;
  tighten(dataDir, 0o700);
  for (const name of names) {
    // A too-open master key is refused, not fixed: someone may have read it (masterKey.ts says so).
    if (NOT_OURS.has(name) || name.startsWith(MASTER_KEY_FILE)) continue;
    const path = join(dataDir, name);
    const stat = lstatSync(path);
    if (stat.isFile()) tighten(path, 0o600);
    else if (stat.isDirectory()) tighten(path, 0o700);
  }
  return changed;
}
