/**
 * The operator's sandbox limits, from the worker's environment (`awaken up` and `awaken worker`
 * alike). A value that does not parse stops the process at start-up, naming the variable: a typo
 * must not silently leave sandboxes with the defaults.
 *
 *   AWAKEN_SANDBOX_MEMORY               memory per sandbox, e.g. 2g, 512m (default 2g)
 *   AWAKEN_SANDBOX_DISK_QUOTA           disk per workspace, e.g. 2g (default 2g)
 *   AWAKEN_SANDBOX_INODE_QUOTA          files and directories per workspace (default 100000)
 *   AWAKEN_SANDBOX_WORKSPACES_PER_TENANT session workspaces one tenant may hold on a host (default 100)
 *   AWAKEN_SANDBOX_MEMORY_ENFORCEMENT   auto (default) | cgroup | rlimit
 *   AWAKEN_SANDBOX_CGROUP               a delegated cgroup to create sandbox cgroups under
 *   AWAKEN_CONTAINER_PULL               container tier: never (default: local store only) | missing
 *   AWAKEN_CONTAINER_TLS_VERIFY         container tier: verify a registry's TLS when pulling (default true)
 *   AWAKEN_CONTAINER_STORAGE            container tier: this host's own podman store (containerStorage.ts)
 */
import type { BwrapTierOptions } from "./bwrapTier.js";
import type { ContainerTierOptions } from "./containerTier.js";
import { DEFAULT_WORKSPACES_PER_TENANT } from "./workspaces.js";

const UNITS: Record<string, number> = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };
/** Below this no shell starts: a limit this small is a mistake. */
const MIN_BYTES = 16 * 2 ** 20;
/** Likewise for files: fewer cannot hold a small project. */
const MIN_INODES = 1_000;

/** `2g`, `512M`, `1.5GiB`, `1073741824` → bytes; null for anything else. */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!match) return null;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

export function sandboxLimitsFromEnv(env: NodeJS.ProcessEnv): Pick<BwrapTierOptions, "limits" | "memory"> {
  const size = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === "") return undefined;
    const bytes = parseByteSize(raw);
    if (bytes === null || bytes < MIN_BYTES) {
      throw new Error(
        `${name} must be a size of at least 16m, such as 2g or 512m (got ${JSON.stringify(raw)})`,
      );
    }
    return bytes;
  };
  const memoryBytes = size("AWAKEN_SANDBOX_MEMORY");
  const workspaceBytes = size("AWAKEN_SANDBOX_DISK_QUOTA");
  const workspaceInodes = count("AWAKEN_SANDBOX_INODE_QUOTA", env.AWAKEN_SANDBOX_INODE_QUOTA, MIN_INODES);
  const enforcement = env.AWAKEN_SANDBOX_MEMORY_ENFORCEMENT || undefined;
  if (
    enforcement !== undefined &&
    enforcement !== "auto" &&
    enforcement !== "cgroup" &&
    enforcement !== "rlimit"
  ) {
    throw new Error(
      `AWAKEN_SANDBOX_MEMORY_ENFORCEMENT must be auto, cgroup or rlimit (got ${JSON.stringify(enforcement)})`,
    );
  }
  const cgroupParent = env.AWAKEN_SANDBOX_CGROUP || undefined;
  return {
    limits: {
      ...(memoryBytes === undefined ? {} : { memoryBytes }),
      ...(workspaceBytes === undefined ? {} : { workspaceBytes }),
      ...(workspaceInodes === undefined ? {} : { workspaceInodes }),
    },
    memory: {
      ...(enforcement === undefined ? {} : { enforcement }),
      ...(cgroupParent === undefined ? {} : { cgroupParent }),
    },
  };
}

/** How many session workspaces one tenant may hold on this host (workspaces.ts). */
export function workspacesPerTenantFromEnv(env: NodeJS.ProcessEnv): number {
  const name = "AWAKEN_SANDBOX_WORKSPACES_PER_TENANT";
  return count(name, env[name], 1) ?? DEFAULT_WORKSPACES_PER_TENANT;
}

/** A whole number of at least `min`; undefined when unset. */
function count(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number of at least ${min} (got ${JSON.stringify(raw)})`);
  }
  return value;
}

/** Where the container tier's images may come from (containerTier.ts). */
export function containerPullFromEnv(
  env: NodeJS.ProcessEnv,
): Pick<ContainerTierOptions, "pull" | "tlsVerify"> {
  const pull = env.AWAKEN_CONTAINER_PULL || undefined;
  if (pull !== undefined && pull !== "never" && pull !== "missing")
    throw new Error(`AWAKEN_CONTAINER_PULL must be never or missing (got ${JSON.stringify(pull)})`);
  const tls = env.AWAKEN_CONTAINER_TLS_VERIFY?.trim().toLowerCase() || undefined;
  if (tls !== undefined && tls !== "true" && tls !== "false")
    throw new Error(`AWAKEN_CONTAINER_TLS_VERIFY must be true or false (got ${JSON.stringify(tls)})`);
  return {
    ...(pull === undefined ? {} : { pull }),
    ...(tls === undefined ? {} : { tlsVerify: tls === "true" }),
  };
}
