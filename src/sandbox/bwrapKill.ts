import { readFileSync } from "node:fs";

/** How long bwrap gets to reap its killed init and exit before its whole group is killed. */
const INIT_KILL_GRACE_MS = 500;

/**
 * Takes a bwrap sandbox down: the namespace's init (bwrap's child) first, so that bwrap reaps it
 * (killed the other way round, the init is left to host PID 1 as a zombie, and its uid looks in
 * use until PID 1 reaps it), then bwrap's whole process group if it has not exited meanwhile.
 */
export async function killBwrap(pid: number, exited: Promise<unknown>): Promise<void> {
  let inits: number[] = [];
  try {
    inits = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).map(Number);
  } catch {
    // Gone, or no children file on this kernel: the group kill below does it.
  }
  for (const init of inits.filter((child) => Number.isInteger(child) && child > 0)) signal(init);
  let timer: NodeJS.Timeout | undefined;
  const gone =
    inits.length === 0
      ? false
      : await Promise.race([
          exited.then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), INIT_KILL_GRACE_MS);
          }),
        ]);
  clearTimeout(timer);
  if (!gone) signal(-pid);
}

function signal(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
