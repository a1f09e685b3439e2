import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, lstat, readlink } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import type { SystemEntry } from "./bwrapArgs.js";
import type { MountTools } from "./sandboxMounts.js";

const execFileAsync = promisify(execFile);

/** What a bwrap sandbox is built from on this host. */
export interface BwrapHost {
  bashPath: string;
  bwrapPath: string;
  prlimitPath: string;
  /** The live sandbox's supervisor runs on it; under /usr, so the sandbox sees the same file. */
  perlPath: string;
  systemEntries: SystemEntry[];
  /** util-linux tools a root worker launches each sandbox through (sandboxMounts.ts); root only. */
  mountTools?: MountTools;
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
 * or perl, all always present on Debian; for a root worker also util-linux's unshare, mount and
 * setpriv) is missing or does not run.
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
  const host: BwrapHost = {
    bashPath,
    bwrapPath,
    prlimitPath,
    perlPath,
    systemEntries: await systemEntries(),
  };
  if (process.getuid?.() !== 0) return host;
  const [unsharePath, mountPath, setprivPath] = await Promise.all([
    locate("unshare"),
    locate("mount"),
    locate("setpriv"),
  ]);
  if (unsharePath === null || mountPath === null || setprivPath === null) return null;
  return { ...host, mountTools: { unsharePath, mountPath, setprivPath } };
}

/**
 * Why this host cannot run the bwrap tier, in words for an operator (null: it can). Checked once
 * at start-up, so a missing bubblewrap is said before the first built-in tool fails on it.
 */
export async function bwrapUnavailableReason(): Promise<string | null> {
  if (process.platform !== "linux") return `the bwrap tier needs Linux, not ${process.platform}`;
  if ((await locate("bwrap")) === null) return "bubblewrap (bwrap) is not installed";
  if ((await probeBwrapHost()) === null) {
    const tools =
      process.getuid?.() === 0 ? "prlimit, bash, perl, unshare, mount or setpriv" : "prlimit, bash or perl";
    return `bwrap does not run, or ${tools} is missing`;
  }
  return null;
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
