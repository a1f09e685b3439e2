import { lstat } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxProvider } from "./ports.js";

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Where a session's workspace lives under the worker's workspace root. The id comes from the
 * activation, but it is a path component: anything but a plain id is refused rather than joined.
 */
export function workspaceDirectory(root: string, sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  return join(root, sessionId);
}

/** What erasing sessions' workspaces on this host did. */
export interface HostWorkspaceErasure {
  removed: number;
  failed: number;
  /** Sessions with no workspace on this host. */
  absent: number;
}

/**
 * Deletes the sessions' workspaces under `root` through `provider`, which first stops a live
 * sandbox over one (as a session's deletion does); the next turn starts over an empty workspace.
 * A workspace still there afterwards (an error) is counted as failed and told to `warn`.
 */
export async function eraseHostWorkspaces(
  provider: Pick<SandboxProvider, "destroy">,
  root: string,
  sessionIds: string[],
  warn: (sessionId: string, error: unknown) => void,
): Promise<HostWorkspaceErasure> {
  const outcome: HostWorkspaceErasure = { removed: 0, failed: 0, absent: 0 };
  for (const sessionId of sessionIds) {
    const path = workspaceDirectory(root, sessionId);
    try {
      if (!(await exists(path))) {
        outcome.absent += 1;
        continue;
      }
      await provider.destroy(sessionId);
      if (await exists(path)) throw new Error("the workspace is still there after its deletion");
      outcome.removed += 1;
    } catch (error) {
      warn(sessionId, error);
      outcome.failed += 1;
    }
  }
  return outcome;
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
