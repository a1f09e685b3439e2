import { chmod, lchown, lstat, mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { SandboxUnavailableError } from "./ports.js";

export interface HostOwner {
  uid: number;
  gid: number;
}

/**
 * Makes a session's host workspace ready for a sandbox running as `owner`: present, mode 0700 and
 * owned by that uid, so no other sandbox uid can read it. Its ancestors must let the uid pass
 * (search permission for others), since bwrap opens the bind source as that uid.
 *
 * A workspace realized before under another uid (a worker restart hands out uids afresh) is
 * re-owned entry by entry with lchown, never following a link the sandbox may have planted
 * (it could point at any host file); nothing runs in it while this happens.
 */
export async function prepareWorkspace(path: string, owner: HostOwner | null): Promise<void> {
  // The root is created traversable-only (no listing of other sessions' workspaces).
  await mkdir(dirname(path), { recursive: true, mode: 0o711 });
  await mkdir(path, { recursive: true, mode: 0o700 });
  if (owner === null) return;
  await requireSearchable(dirname(path));
  if ((await lstat(path)).uid !== owner.uid) await chownTree(path, owner);
  await chmod(path, 0o700);
}

async function requireSearchable(dir: string): Promise<void> {
  for (let at = dir; ; at = dirname(at)) {
    if (((await stat(at)).mode & 0o001) === 0) {
      throw new SandboxUnavailableError(
        "bwrap",
        `${at} is not searchable by other users, so a sandbox uid cannot reach its workspace under it (chmod o+x ${at}, or choose another workspace root)`,
      );
    }
    if (dirname(at) === at) return;
  }
}

async function chownTree(path: string, owner: HostOwner): Promise<void> {
  await lchown(path, owner.uid, owner.gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else await lchown(child, owner.uid, owner.gid);
  }
}
