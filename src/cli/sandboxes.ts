import { resolve } from "node:path";
import { BwrapTierProvider } from "../sandbox/bwrapTier.js";
import type { EgressProxyOptions } from "../sandbox/egressProxy.js";
import { sandboxLimitsFromEnv } from "../sandbox/limitsFromEnv.js";
import { NoneTierProvider } from "../sandbox/noneTier.js";
import { PackagePreparer } from "../sandbox/packagePreparer.js";
import { TieredSandboxProvider } from "../sandbox/tieredProvider.js";

/**
 * The sandbox tiers this process can realize, each session's workspace under `workspaceRoot`.
 * Which tier a session gets is not decided here: its environment revision names it. The bwrap
 * tier checks its host prerequisites on first use and refuses with install instructions when they
 * are missing; it is never swapped for another tier. Environment packages are prepared under
 * `<workspaceRoot>/.packages/` with the installers run in `env` (the worker's environment: registry
 * settings such as `npm_config_registry` pass through).
 */
export function createSandboxes(
  workspaceRoot: string,
  env: NodeJS.ProcessEnv = process.env,
  /** Tests only (UpOptions.sandboxEgress): the bwrap egress proxies' resolver and address policy. */
  egress?: EgressProxyOptions,
): TieredSandboxProvider {
  const root = resolve(workspaceRoot);
  return new TieredSandboxProvider(
    {
      bwrap: new BwrapTierProvider({
        workspaceRoot: root,
        // Memory and disk per sandbox: AWAKEN_SANDBOX_MEMORY, AWAKEN_SANDBOX_DISK_QUOTA, …
        ...sandboxLimitsFromEnv(env),
        ...(egress ? { egress } : {}),
      }),
      none: new NoneTierProvider(root),
    },
    new PackagePreparer({ root, env }),
  );
}
