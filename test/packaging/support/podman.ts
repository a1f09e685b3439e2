/**
 * podman and buildah as this machine kind can run them: runc (crun cannot use cgroups v1 in hybrid
 * mode) and explicit ulimits (podman's defaults exceed the hard limits of a container host).
 */
import { execFileSync, spawnSync } from "node:child_process";

const RUNC = "/usr/sbin/runc";
const ULIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"];

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(tool: string, args: string[], input?: Buffer): Run {
  const result = spawnSync(tool, args, {
    input,
    encoding: "buffer",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 15 * 60_000,
  });
  if (result.error) return { status: null, stdout: "", stderr: String(result.error) };
  return { status: result.status, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** Runs `tool args` and returns its stdout; a failure throws with the tool's own words. */
export function must(tool: "podman" | "buildah", args: string[], input?: Buffer): string {
  const result = run(tool, ["--runtime", RUNC, ...args], input);
  if (result.status !== 0) {
    throw new Error(
      `${tool} ${args.join(" ")} failed (${result.status}):\n${result.stderr || result.stdout}`,
    );
  }
  return result.stdout;
}

/** The same, without throwing: for clean-up and for polling. */
export function attempt(tool: "podman" | "buildah", args: string[]): Run {
  return run(tool, ["--runtime", RUNC, ...args]);
}

/** Why podman cannot run containers here, or null when it can. */
export function podmanUnavailable(): string | null {
  for (const tool of ["podman", "buildah"]) {
    if (run("sh", ["-c", `command -v ${tool}`]).status !== 0) {
      return `${tool} is not installed (apt-get install podman buildah runc; .ci/run does it)`;
    }
  }
  try {
    execFileSync(RUNC, ["--version"], { stdio: "ignore" });
  } catch {
    return `${RUNC} is missing (apt-get install runc)`;
  }
  const info = run("podman", ["--runtime", RUNC, "info"]);
  if (info.status !== 0) return `podman info failed: ${info.stderr.trim()}`;
  return null;
}

export const runLimits: readonly string[] = ULIMITS;
