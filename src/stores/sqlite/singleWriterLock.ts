import { createHash } from "node:crypto";
import { mkdirSync, realpathSync, rmSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { basename, dirname, join } from "node:path";

export interface SingleWriterLock {
  release(): Promise<void>;
}

/**
 * Makes this process the only server on one SQLite file, so that what it finds claimed at start
 * can only be an earlier incarnation's (gone, since it could not hold the lock otherwise). The lock
 * is a listening socket: the kernel drops it when the process dies, even by kill -9, so a crash
 * never leaves a stale lock. On Linux it lives in the abstract namespace (no file, no path-length
 * limit), named by the file's real path; elsewhere it is a socket file next to the database.
 */
export async function lockSqliteFile(file: string): Promise<SingleWriterLock> {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const real = join(realpathSync(dirname(file)), basename(file));
  const abstract = process.platform === "linux";
  const name = abstract
    ? `\0awaken-sqlite-${createHash("sha256").update(real).digest("hex").slice(0, 40)}`
    : `${real}.lock`;
  const server = createServer((socket) => socket.destroy());
  try {
    await listen(server, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    if (abstract || (await alive(name))) {
      throw new Error(
        `${real} is in use by another awaken process: one server per SQLite file. Stop the other one, ` +
          "or run replicas on PostgreSQL (--database-url).",
      );
    }
    rmSync(name, { force: true }); // a socket file whose process is gone
    await listen(server, name);
  }
  server.unref();
  return {
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function alive(path: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
