import { chmod, lchown, lstat, mkdir, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";

export interface HostOwner {
  uid: number;
  gid: number;
}

/**
 * Makes a session's host workspace ready for a sandbox running as `owner`: present, mode 0700 and
 * owned by that uid, so no other sandbox uid can read it. Its ancestors may be closed to others (a
 * 0700 data dir, /root): a root worker binds it into the sandbox before dropping to the uid
 * (sandboxMounts.ts), so the uid never walks the host path.
 *
 * A workspace realized before under another uid (a worker restart hands out uids afresh) is
 * re-owned entry by entry with lchown, never following a link the sandbox may have planted
 * (it could point at any host file); nothing runs in it while this happens.
 */
export async function prepareWorkspace(path: string, owner: HostOwner | null): Promise<void> {
  // The root is private to the worker: no other user lists or enters sessions' workspaces.
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await mkdir(path, { recursive: true, mode: 0o700 });
  if (owner === null) return;
  if ((await lstat(path)).uid !== owner.uid) await chownTree(path, owner);
  await chmod(path, 0o700);
}

async function chownTree(path: string, owner: HostOwner): Promise<void> {
  await lchown(path, owner.uid, owner.gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else await lchown(child, owner.uid, owner.gid);
  }
}
