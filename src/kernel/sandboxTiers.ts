/**
 * The isolation tiers a cloud environment may name for its built-in tools, ranked by how much of
 * the host they keep out of a command's reach. A tier weaker than the default is an operator's
 * decision, never an API key holder's: the coordinator refuses environments (and sessions) that
 * name one, and a worker refuses to realize one, unless the operator enabled weaker tiers.
 */
export const SANDBOX_TIER_TABLE = {
  bwrap: { isolation: 1, runsAs: "a bubblewrap sandbox as an unprivileged uid of its own" },
  // Not weaker than bwrap: its own namespaces, no capabilities, an unprivileged uid, an allowed image.
  container: { isolation: 1, runsAs: "a podman container (runc) as an unprivileged uid of its own" },
  none: {
    isolation: 0,
    runsAs: "a plain subprocess as the server's own user, which can read its data dir and master key",
  },
} as const;

export type SandboxTierName = keyof typeof SANDBOX_TIER_TABLE;
export const SANDBOX_TIER_NAMES = Object.keys(SANDBOX_TIER_TABLE) as SandboxTierName[];
export const DEFAULT_SANDBOX_TIER: SandboxTierName = "bwrap";

/** How an operator enables the tiers weaker than the default, on `awaken up` and `awaken worker`. */
export const ALLOW_WEAKER_TIERS_FLAG = "--allow-unsandboxed-tier";
export const ALLOW_WEAKER_TIERS_ENV = "AWAKEN_ALLOW_UNSANDBOXED_TIER";

export function isWeakerThanDefault(tier: SandboxTierName): boolean {
  return SANDBOX_TIER_TABLE[tier].isolation < SANDBOX_TIER_TABLE[DEFAULT_SANDBOX_TIER].isolation;
}

/** Whether the operator's environment enables weaker tiers (`1` or `true`). */
export function weakerTiersAllowedByEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env[ALLOW_WEAKER_TIERS_ENV]?.trim().toLowerCase();
  return value === "1" || value === "true";
}

/** The refusal of a weaker tier, saying what it is and how an operator enables it. */
export function weakerTierRefusal(tier: SandboxTierName, where: string): string {
  return (
    `${where}: the "${tier}" tier runs built-in tools as ${SANDBOX_TIER_TABLE[tier].runsAs}; ` +
    `it is disabled on this server. An operator may enable it by starting the server (and every ` +
    `worker) with ${ALLOW_WEAKER_TIERS_FLAG} or ${ALLOW_WEAKER_TIERS_ENV}=1; otherwise use "${DEFAULT_SANDBOX_TIER}"`
  );
}
