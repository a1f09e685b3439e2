import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, lstat, readlink } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import type { SystemEntry } from "./bwrapArgs.js";

const execFileAsync = promisify(execFile);

/** What a bwrap sandbox is built from on this host. */
export interface BwrapHost {
  bashPath: string;
  bwrapPath: string;
  prlimitPath: string;
  /** The live sandbox's supervisor runs on it; under /usr, so the sandbox sees the same file. */
  perlPath: string;
  systemEntries: SystemEntry[];
}

/** perl as the sandbox sees it (only /usr is bound): Debian's perl-base, essential everywhere. */
const PERL_PATHS = ["/usr/bin/perl", "/usr/local/bin/perl"];

/**
 * Top-level system paths besides /usr: on a merged-/usr host (Debian 12) they are links into /usr
 * and become the same links inside; on an older layout they are real directories, bound read-only.
 */
const SYSTEM_PATHS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * Finds the tools on the worker's PATH once, as absolute paths: the sandboxed child is spawned
 * with an empty environment, so it could not look them up itself. Null when bwrap (or prlimit, bash
 * or perl, all always present on Debian) is missing or does not run.
 */
export async function probeBwrapHost(): Promise<BwrapHost | null> {
  const [bashPath, bwrapPath, prlimitPath] = await Promise.all([
    locate("bash"),
    locate("bwrap"),
    locate("prlimit"),
  ]);
  const perlPath = await firstExecutable(PERL_PATHS);
  if (bashPath === null || bwrapPath === null || prlimitPath === null || perlPath === null) return null;
  try {
    await execFileAsync(bwrapPath, ["--version"], { timeout: 5_000 });
  } catch {
    return null;
  }
  return { bashPath, bwrapPath, prlimitPath, perlPath, systemEntries: await systemEntries() };
}

/** Whether this host can run the bwrap tier at all (for wiring: which tiers a worker offers). */
export async function bwrapAvailable(): Promise<boolean> {
  return (await probeBwrapHost()) !== null;
}

function locate(name: string): Promise<string | null> {
  const dirs = (process.env.PATH ?? "/usr/bin:/bin").split(delimiter).filter((dir) => dir !== "");
  return firstExecutable(dirs.map((dir) => join(dir, name)));
}

async function firstExecutable(candidates: string[]): Promise<string | null> {
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there.
    }
  }
  return null;
}

async function systemEntries(): Promise<SystemEntry[]> {
  const entries: SystemEntry[] = [];
  for (const path of SYSTEM_PATHS) {
    try {
      const stat = await lstat(path);
      if (stat.isSymbolicLink()) entries.push({ path, symlinkTo: await readlink(path) });
      else if (stat.isDirectory()) entries.push({ path, directory: true });
    } catch {
      // Absent on this architecture (/lib32, /libx32, ...).
    }
  }
  return entries;
}
