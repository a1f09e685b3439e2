/**
 * A podman store of its own (the layout `--container-storage <dir>` gives a worker host), for
 * tests: podman run against it, and its removal. Removing a store takes its containers and images
 * out of it (podman unmounts their overlay layers, and its own mount of the store once nothing is
 * left), lazily unmounts whatever is still mounted under it (a podman killed mid-way), then
 * deletes the directory. Not `podman system reset`: that also removes the host's networks, which
 * no store owns.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { containerStorageLayout, podmanStorageArgs } from "../../src/sandbox/containerStorage.js";

const RUNC = "/usr/sbin/runc";

export interface PodmanStore {
  dir: string;
  /** podman's global options naming this store. */
  args: string[];
  /** `podman <store> …args`: stdout; throws with stderr on a non-zero exit. */
  podman(args: readonly string[]): string;
  remove(): void;
}

/** The mount points at or under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter(
      (point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)),
    );
  return points.sort((a, b) => b.length - a.length);
}

export function podmanStore(dir: string): PodmanStore {
  const args = podmanStorageArgs(containerStorageLayout(dir));
  const podman = (more: readonly string[]): string => {
    const result = spawnSync("podman", [...args, ...more], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`podman ${more.join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  return {
    dir,
    args,
    podman,
    remove() {
      spawnSync("podman", [...args, "--runtime", RUNC, "rm", "--all", "--force", "--time", "0"]);
      spawnSync("podman", [...args, "rmi", "--all", "--force"]);
      for (const point of mountsUnder(dir)) spawnSync("umount", ["--lazy", point]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
