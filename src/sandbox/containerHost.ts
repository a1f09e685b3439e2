import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The tools the container tier runs: podman, with runc as its OCI runtime (crun refuses cgroups v1 hybrid). */
export interface ContainerHost {
  podmanPath: string;
  runcPath: string;
}

const PODMAN_CANDIDATES = ["/usr/bin/podman", "/usr/local/bin/podman"];
const RUNC_CANDIDATES = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"];

export const CONTAINER_INSTALL_HINT =
  "install podman and runc (Debian/Ubuntu: `apt-get install podman runc`) on every worker host";

async function firstExecutable(candidates: readonly string[]): Promise<string | null> {
  for (const path of candidates) {
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {
      // Try the next.
    }
  }
  return null;
}

/**
 * podman and runc on this host, checked to run (`podman --version`); null with the reason when
 * either is missing. `override` (tests) names the podman binary to use instead.
 */
export async function probeContainerHost(override?: {
  podmanPath?: string;
  runcPath?: string;
}): Promise<ContainerHost | { missing: string }> {
  const podmanPath = override?.podmanPath ?? (await firstExecutable(PODMAN_CANDIDATES));
  if (podmanPath === null) return { missing: "podman is not installed on this worker" };
  const runcPath = override?.runcPath ?? (await firstExecutable(RUNC_CANDIDATES));
  if (runcPath === null) return { missing: "runc is not installed on this worker" };
  try {
    await run(podmanPath, ["--version"], { timeout: 10_000, env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
  } catch (error) {
    return { missing: `podman does not run on this worker (${(error as Error).message.split("\n")[0]})` };
  }
  return { podmanPath, runcPath };
}
