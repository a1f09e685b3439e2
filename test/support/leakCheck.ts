/**
 * Vitest global set-up: the suite must leave nothing behind. Every scratch dir the tests (and the
 * processes they start) make goes under one run directory (TMPDIR); after the run, anything still
 * in it, any process started from this checkout or holding a path under it, and the fault suite's
 * private PostgreSQL clusters (one per topology) are leaks. They are cleaned up and the run fails,
 * naming each one.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { privateClusterNames, privateClusterPresent } from "./privatePostgres.js";

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/** Processes other than this one whose command line names `marker`. */
function processesNaming(markers: string[]): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue; // exited meanwhile
    }
    if (markers.some((m) => cmdline.includes(m))) found.push(`${pid}: ${cmdline.slice(0, 200)}`);
  }
  return found;
}

/** Waits a little for processes that are still on their way out (a SIGKILL is not instant). */
async function lingering(markers: string[]): Promise<string[]> {
  for (let i = 0; i < 20; i += 1) {
    const left = processesNaming(markers);
    if (left.length === 0) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return processesNaming(markers);
}

/**
 * Containers and images the container tier's tests left: their test image carries this run's
 * label (test/support/sandboxImage.ts), and so does every container made from it. Removed, named.
 */
function podmanLeaks(runDir: string): string[] {
  const label = `label=io.awaken.test-run=${basename(runDir)}`;
  const podman = (args: string[]): string => {
    try {
      return execFileSync("podman", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return ""; // No podman on this host: nothing can have leaked.
    }
  };
  const leaks: string[] = [];
  const containers = podman(["ps", "--all", "--filter", label, "--format", "{{.Names}}"]);
  for (const name of containers.split("\n").filter(Boolean)) {
    leaks.push(`podman container ${name}`);
    podman(["--runtime", "/usr/sbin/runc", "rm", "--force", "--time", "0", name]);
  }
  const images = podman(["images", "--filter", label, "--format", "{{.Repository}}:{{.Tag}}"]);
  for (const image of images.split("\n").filter(Boolean)) {
    leaks.push(`podman image ${image}`);
    podman(["rmi", "--force", image]);
  }
  return leaks;
}

export default function setup(): () => Promise<void> {
  const systemTmp = tmpdir();
  // Like /tmp itself: sandbox uids must reach the egress dirs made under it.
  const runDir = mkdtempSync(join(tmpdir(), "awt-"));
  chmodSync(runDir, 0o1777);
  process.env.TMPDIR = runDir;
  const markers = [runDir, join(CHECKOUT, "bin", "awaken.js"), join(CHECKOUT, "dist", "cli")];

  return async () => {
    const leaks: string[] = [];
    for (const entry of await lingering(markers)) leaks.push(`process ${entry}`);
    for (const line of processesNaming(markers)) {
      const pid = Number(line.split(":")[0]);
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    for (const leak of podmanLeaks(runDir)) leaks.push(leak);
    for (const cluster of privateClusterNames().filter((name) => privateClusterPresent(name))) {
      leaks.push(`PostgreSQL cluster ${cluster}`);
      execFileSync("pg_dropcluster", ["--stop", readdirSync("/etc/postgresql").sort()[0]!, cluster], {
        env: { ...process.env, TMPDIR: systemTmp },
      });
    }
    if (existsSync(runDir)) {
      for (const name of readdirSync(runDir)) {
        // Node's own module compile cache (module.enableCompileCache), not a test's scratch.
        if (name === "node-compile-cache") continue;
        leaks.push(`scratch ${join(runDir, name)}`);
      }
      rmSync(runDir, { recursive: true, force: true });
    }
    if (leaks.length === 0) return;
    // A throw from a global teardown is printed but does not change vitest's exit code.
    process.exitCode = 1;
    throw new Error(`the test suite left ${leaks.length} thing(s) behind:\n  ${leaks.join("\n  ")}`);
  };
}
