import { chmod, chown, copyFile, lstat, mkdir, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";

/**
 * Copies what an installer wrote (as an unprivileged user, in its scratch directory) into a package
 * set the worker owns. Only directories, regular files and symlinks are copied; symlinks as they are
 * (never followed); modes are reset to 0755/0644, so no setuid, setgid or writable-by-others bit
 * the installer's user set survives into a tree the worker's user owns.
 */
export async function copyPreparedTree(from: string, to: string): Promise<void> {
  const stat = await lstat(from);
  if (stat.isSymbolicLink()) {
    await symlink(await readlink(from), to);
  } else if (stat.isDirectory()) {
    await mkdir(to, { mode: 0o755 });
    await chmod(to, 0o755);
    for (const name of await readdir(from)) await copyPreparedTree(join(from, name), join(to, name));
  } else if (stat.isFile()) {
    // copyFile keeps the source's owner when run as root (libuv copies it, like `cp -p`): take it back.
    await copyFile(from, to);
    await chown(to, process.getuid?.() ?? stat.uid, process.getgid?.() ?? stat.gid);
    await chmod(to, stat.mode & 0o100 ? 0o755 : 0o644);
  }
  // Devices, fifos and sockets are not part of a package: left out.
}
