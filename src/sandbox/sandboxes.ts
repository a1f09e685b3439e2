import { resolve } from "node:path";
import type { Logger } from "pino";
import { allowedContainerImages } from "../kernel/containerImages.js";
import { OutboundPolicy } from "../kernel/outboundPolicy.js";
import { isWeakerThanDefault } from "../kernel/sandboxTiers.js";
import { bwrapUnavailableReason } from "./bwrapHost.js";
import { BwrapTierProvider } from "./bwrapTier.js";
import { CONTAINER_INSTALL_HINT, probeContainerHost } from "./containerHost.js";
import { type ContainerStorage, containerStorageFrom } from "./containerStorage.js";
import { ContainerTierProvider } from "./containerTier.js";
import type { EgressProxyOptions } from "./egressProxy.js";
import { RepositoryCloner } from "./gitClone.js";
import { containerPullFromEnv, sandboxLimitsFromEnv, workspacesPerTenantFromEnv } from "./limitsFromEnv.js";
import { NoneTierProvider } from "./noneTier.js";
import { PackagePreparer } from "./packagePreparer.js";
import { TieredSandboxProvider } from "./tieredProvider.js";
import { TenantWorkspaces } from "./workspaces.js";

/**
 * The sandbox tiers this process can realize, each session's workspace under `workspaceRoot`.
 * Which tier a session gets is not decided here: its environment revision names it. The bwrap
 * tier checks its host prerequisites on first use and refuses with install instructions when they
 * are missing; it is never swapped for another tier. Tiers weaker than the default (`none`) are
 * offered only when the operator enabled them. Environment packages are prepared under
 * `<workspaceRoot>/.packages/` with the installers run in `env` (the worker's environment: registry
 * settings such as `npm_config_registry` pass through).
 */
export function createSandboxes(
  workspaceRoot: string,
  env: NodeJS.ProcessEnv = process.env,
  /** Tests only (UpOptions.sandboxEgress): the bwrap egress proxies' resolver and address policy. */
  egress?: EgressProxyOptions,
  /** The operator enabled tiers weaker than the default (`--allow-unsandboxed-tier`). */
  allowWeakerTiers = false,
  /**
   * The address policy sessions' repository clones obey (the host's outbound policy, with the
   * operator's allow-list). Absent: public addresses only.
   */
  repositoryPolicy?: OutboundPolicy,
  /**
   * The container tier's image store on this host, opened at start-up (`awaken worker
   * --container-storage`). Absent: AWAKEN_CONTAINER_STORAGE, else podman's default store.
   */
  containerStorage: ContainerStorage | undefined = containerStorageFrom(undefined, env),
): TieredSandboxProvider {
  const root = resolve(workspaceRoot);
  const tiers = {
    bwrap: new BwrapTierProvider({
      workspaceRoot: root,
      // Memory and disk per sandbox: AWAKEN_SANDBOX_MEMORY, AWAKEN_SANDBOX_DISK_QUOTA, …
      ...sandboxLimitsFromEnv(env),
      ...(egress ? { egress } : {}),
    }),
    // Images from AWAKEN_ALLOWED_CONTAINER_IMAGES; podman and runc are checked on first use.
    container: new ContainerTierProvider({
      workspaceRoot: root,
      allowedImages: allowedContainerImages(env),
      limits: sandboxLimitsFromEnv(env).limits,
      ...(egress ? { egress } : {}),
      ...containerPullFromEnv(env),
      ...(containerStorage ? { storage: containerStorage } : {}),
    }),
    none: new NoneTierProvider(root),
  };
  // A weaker tier the operator did not enable is not offered: realizing it is refused, saying how.
  const offered = Object.fromEntries(
    Object.entries(tiers).filter(
      ([tier]) => allowWeakerTiers || !isWeakerThanDefault(tier as keyof typeof tiers),
    ),
  );
  return new TieredSandboxProvider(
    offered,
    new PackagePreparer({ root, env }),
    new TenantWorkspaces(root, workspacesPerTenantFromEnv(env)),
    {
      cloner: new RepositoryCloner({ policy: repositoryPolicy ?? OutboundPolicy.publicOnly() }),
      workspaceRoot: root,
    },
  );
}

/**
 * Said once at start-up: without bubblewrap every built-in tool of a cloud environment (tier
 * `bwrap`, the default) fails, and the first an operator would otherwise hear of it is a user's.
 */
export async function reportMissingBubblewrap(logger: Logger): Promise<void> {
  const reason = await bwrapUnavailableReason();
  if (reason === null) return;
  logger.warn(
    { component: "sandbox" },
    `${reason}: built-in tools (bash, read, write, …) of cloud environments need it and will fail on this host; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)`,
  );
}

/**
 * Said once at start-up when the operator allowed container images: whether this host can run the
 * container tier (podman, runc) and what the tier enforces here, so nobody believes more of it.
 */
export async function reportContainerTier(
  logger: Logger,
  env: NodeJS.ProcessEnv,
  /** The store the tier uses (`--container-storage`), named in the line; else AWAKEN_CONTAINER_STORAGE's. */
  storageDir: string | undefined = env.AWAKEN_CONTAINER_STORAGE || undefined,
): Promise<void> {
  const images = allowedContainerImages(env);
  if (images.length === 0) return;
  const host = await probeContainerHost();
  if ("missing" in host) {
    logger.warn(
      { component: "sandbox", images },
      `${host.missing}: environments of tier "container" will fail on this host; ${CONTAINER_INSTALL_HINT}`,
    );
    return;
  }
  logger.info(
    { component: "sandbox", images, runtime: host.runcPath, store: storageDir ?? "podman's default" },
    "container tier: enforces an unprivileged uid, no capabilities, no-new-privileges, a read-only root, seccomp, no network but the egress proxy, memory and pids (the container's cgroup), rlimits and the workspace quota",
  );
}
